#pragma once
// JUnit XML reports: one <testsuite> per group ("op/backend/dtype", "golden/vulkan"), one
// <testcase> per case id. FAIL/ERROR/MISSED/UNEXPECTED become <failure> (its body: the command line
// that reproduces it), UNSUPPORTED <skipped> with the reason. A known failure (tools/xfail.h) is
// <skipped type="XFAIL"> with the list's reason; a listed case that passed is <failure type="XPASS">.
//
// The file is always well-formed XML 1.0 in UTF-8 whatever the messages hold: XML specials are
// escaped, bytes that are not UTF-8 and characters XML 1.0 forbids become U+FFFD.
// Testcases stream to unnamed temporary files as they come, so memory does not grow with the
// number of cases; finish() assembles the report beside the destination and renames it over it
// (a reader never sees half a report; tools/report_file.h).
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner.h"
#include "tools/report_file.h"
#include "tools/xfail.h"

namespace ts {

using RerunLine = std::function<std::string(const CaseResult&)>;

class JUnitReport {
 public:
  // `path` should have passed check_output_path (goldens/files.h) before any work started.
  JUnitReport(std::string path, RerunLine rerun);
  JUnitReport(const JUnitReport&) = delete;
  JUnitReport& operator=(const JUnitReport&) = delete;

  // Replaces whatever the destination holds by a report whose one testcase fails with "the run has
  // not finished", so a report of an earlier run never looks current, even if this process is killed.
  void mark_started(const std::string& what);
  size_t add_group(const std::string& name);  // a new testsuite; returns its handle
  // `xfail`: the known-failure entry naming the case (its mark says XFAIL or XPASS).
  void add(size_t group, const CaseResult& r, Mark mark = Mark::none, const XfailEntry* xfail = nullptr);
  // A failing testcase that is no case: e.g. a known-failure pattern whose group passed whole.
  void add_notice(size_t group, const std::string& name, const std::string& type, const std::string& message);
  // Writes the report. `partial` non-empty: the report is partial; a failing testcase in a
  // testsuite named `kind` ("interrupted", "stopped") says why, so no reader takes it for a complete run.
  void finish(const std::string& partial = "", const std::string& kind = "interrupted");

 private:
  struct Group {
    std::string name;
    Spool body;  // its <testcase> elements so far
    long long tests = 0, failures = 0, skipped = 0;
    double time = 0;
  };
  std::string path_;
  RerunLine rerun_;
  std::vector<Group> groups_;
};

// The whole report at once, for results already in memory (golden verify).
void write_junit(const std::string& path, const std::vector<std::pair<std::string, std::vector<CaseResult>>>& groups,
                 const RerunLine& rerun);

// Text as XML character data or attribute value: specials escaped, invalid UTF-8 and characters
// XML 1.0 does not allow replaced by U+FFFD.
std::string xml_text(std::string_view s);

}  // namespace ts
