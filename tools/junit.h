#pragma once
// JUnit XML reports: one <testsuite> per group ("op/backend/dtype", "golden/vulkan"), one
// <testcase> per case id. FAIL/ERROR/MISSED/UNEXPECTED become <failure> (its body: the command line
// that reproduces it), UNSUPPORTED <skipped> with the reason.
//
// The file is always well-formed XML 1.0 in UTF-8 whatever the messages hold: XML specials are
// escaped, bytes that are not UTF-8 and characters XML 1.0 forbids become U+FFFD.
// Testcases stream to unnamed temporary files as they come, so memory does not grow with the
// number of cases; finish() assembles the report beside the destination and renames it over it
// (a reader never sees half a report). A symlink's target is written, the link kept.
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner.h"

namespace ts {

using RerunLine = std::function<std::string(const CaseResult&)>;

class JUnitReport {
 public:
  // `path` should have passed check_output_path (goldens/files.h) before any work started.
  JUnitReport(std::string path, RerunLine rerun);
  ~JUnitReport();
  JUnitReport(const JUnitReport&) = delete;
  JUnitReport& operator=(const JUnitReport&) = delete;

  // Replaces whatever the destination holds by a report whose one testcase fails with "the run has
  // not finished", so a report of an earlier run never looks current, even if this process is killed.
  void mark_started(const std::string& what);
  size_t add_group(const std::string& name);  // a new testsuite; returns its handle
  void add(size_t group, const CaseResult& r);
  // Writes the report. `interrupted` non-empty: the report is partial; a failing testcase in a
  // testsuite named "interrupted" says why, so no reader takes it for a complete run.
  void finish(const std::string& interrupted = "");

 private:
  struct Group {
    std::string name;
    std::FILE* body = nullptr;  // its <testcase> elements so far
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
