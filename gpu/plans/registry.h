#pragma once
// The one list of operators, and what needs it: a case id's operator found by name. It lives with
// the plans, which join each operator's contract (reference/) to its GPU side, so that core/ and
// reference/ name none of them.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/op.h"
#include "core/runner.h"

namespace ts {
// The one list of operators, in the order reports show them.
const std::vector<const OpDef*>& all_ops();
const OpDef* find_op(std::string_view name);  // nullptr if unknown
const OpDef& named_op(std::string_view name);  // throws std::invalid_argument if unknown

// A case id as a user gives it: parsed, its operator known, and checked against the operator's
// declaration (core/case_rules.h). Throws UsageError.
Case parse_case(std::string_view id);

// prepare(op, c, max_bytes) of core/runner.h with the case's own operator; an unknown one is a
// UsageError naming the operators there are.
Expected prepare(const Case& c, uint64_t max_bytes = kMaxCaseBytes);
}  // namespace ts
