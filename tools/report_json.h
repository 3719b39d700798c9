#pragma once
// The --json report: schema `touchstone-report/1`, documented in tools/REPORT_SCHEMA.md and
// checked by tools/report.schema.json. A report is a head (the run: sweep, shard, devices, groups
// with their tallies, coverage, totals, state) and one object per case run; cases stream to a
// temporary file as they come (tools/report_file.h), so a ten-million-case sweep holds none of them.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "core/runner.h"
#include "tools/report_file.h"
#include "tools/tally.h"
#include "tools/xfail.h"

namespace ts {

inline constexpr const char* kReportSchema = "touchstone-report/1";

// A number as JSON: finite values as numbers, others as the strings "inf", "-inf", "nan" (JSON has
// no infinity; an unwritten element's error is infinite). number_value reads either back.
nlohmann::json number(double v);
double number_value(const nlohmann::json& j);

// What the sweep knows about a case beyond its result.
struct CaseNote {
  std::string group;                 // "op/backend/dtype"
  int64_t index = -1;                // position in the whole sweep (before --shard and --match)
  Mark mark = Mark::none;
  const XfailEntry* xfail = nullptr; // the known-failure entry naming it
  bool detailed = false;             // with each failing output's mismatches per dimension and error map
  int64_t elements = 0;              // input elements: what "smallest" means
  std::string kernels;               // --kernels DIR of the run ("" = built-in kernels): in the repro line
};

nlohmann::json case_json(const CaseResult& r, const CaseNote& n);
nlohmann::json xfail_json(const XfailEntry& e);
XfailEntry xfail_from_json(const nlohmann::json& j);
nlohmann::json tally_json(const Tally& t);
Tally tally_from_json(const nlohmann::json& j);
nlohmann::json device_json(const std::string& backend, const DeviceInfo* info, const std::string& unavailable);

// "touchstone repro '<id>' --backend <b>" (and " --kernels '<dir>'" when the run replaced kernels)
std::string repro_line(const std::string& id, const std::string& backend, const std::string& kernels = "");

// The report file: replaced at once by a head saying the run has not finished (state "running"),
// then written whole by finish().
class JsonReport {
 public:
  explicit JsonReport(std::string path);  // `path` should have passed check_output_path
  void mark_started(const std::string& what);
  void add(const nlohmann::json& one_case);
  // `head` is every member but "cases"; the cases added so far follow it.
  void finish(const nlohmann::json& head);

 private:
  std::string path_;
  Spool cases_;
  bool first_ = true;
};

// Reads and checks a report written by JsonReport (merge's inputs); std::runtime_error naming the
// file and what is wrong.
nlohmann::json read_report(const std::string& path);

}  // namespace ts
