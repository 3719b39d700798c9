#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/runner.h"

namespace ts {
// Writes JUnit XML: one <testsuite> per "op/backend/dtype" group, one <testcase> per case id.
// FAIL/ERROR/MISSED/UNEXPECTED become <failure>, UNSUPPORTED <skipped> with the reason.
// Written to a temporary file and renamed, so a reader never sees half a report.
// `rerun` gives the command line that reproduces a failing result (the body of its <failure>).
void write_junit(const std::string& path, const std::vector<std::pair<std::string, std::vector<CaseResult>>>& groups,
                 const std::function<std::string(const CaseResult&)>& rerun);
}  // namespace ts
