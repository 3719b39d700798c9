#pragma once
// check as a pipeline: the executor (tools/check_executor.h) streams each case's results, in sweep
// order, to a CheckPipeline, which marks each result against the run's expectations
// (tools/expectations.h), records it in the CheckRun (tallies, smallest failures, coverage) and
// hands it on to the reporters: live progress, console, JUnit, JSON, HTML, each in the file named
// for it. Every reporter sees the same events in the same order, so the console and each report
// tell the same run; after the stream, shrinking and the expectations settle the run, then each
// reporter writes its end.
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/check_executor.h"
#include "tools/check_run.h"
#include "tools/expectations.h"

namespace ts {

// One backend's result of one case, with what the run's expectations make of it.
struct CaseVerdict {
  const CaseResult& r;
  const CaseRun& c;
  const Group& group;
  size_t group_index;                  // in CheckRun::groups
  Mark mark = Mark::none;
  const XfailEntry* listed = nullptr;  // the known-failure entry naming it
  // Its error maps go into the reports: one of its group's first CheckRun::kShownPerGroup failing
  // cases, the ones the HTML page draws (without --html, every failing case).
  bool detailed = false;

  bool unexpected() const { return mark == Mark::none && is_failure(r.outcome); }
  // Fails the run: an unexpected failure, an XPASS or an UNEXPECTED_UNSUPPORTED.
  bool fails_run() const { return unexpected() || mark == Mark::xpass || mark == Mark::unexpected_unsupported; }
  // The case as the JSON report holds it; `kernels`: the run's --kernels DIR, for the repro line.
  nlohmann::json json(bool with_maps, const std::string& kernels) const;
};

// The run once it is over (complete, stopped or interrupted; shrunk and settled).
class FinishedRun {
 public:
  FinishedRun(const CheckOptions& o, const CheckRun& run, const std::vector<BackendSlot>& slots)
      : o(o), run(run), slots(slots) {}
  const CheckOptions& o;
  const CheckRun& run;
  const std::vector<BackendSlot>& slots;
  const nlohmann::json& head() const;  // the JSON report's head, made once for every report that needs it

 private:
  mutable std::optional<nlohmann::json> head_;
};

class CheckReporter {
 public:
  virtual ~CheckReporter() = default;
  // The groups of a sweep, one per backend slot, as they were added to the run.
  virtual void sweep_started(const Sweep&, std::span<const Group>) {}
  virtual void case_reached() {}
  virtual void result(const CaseVerdict&) {}
  virtual void case_finished(const CaseRun&) {}
  virtual void sweep_finished(std::span<const Group>) {}
  virtual void cases_ended() {}  // before shrinking, which has lines of its own
  virtual void run_finished(const FinishedRun&) {}
};

// The reporters, each defined in the file named for what it writes.
std::unique_ptr<CheckReporter> progress_reporter(const CheckOptions& o, const SweepPlan& plan, bool live);  // progress.cpp
// The sweep's lines on stderr and the summary on stdout (check_print.cpp). `reports`: a report
// lists every case.
std::unique_ptr<CheckReporter> console_reporter(const CheckOptions& o, const std::vector<BackendSlot>& slots,
                                                bool live, bool reports);
std::unique_ptr<CheckReporter> junit_reporter(const CheckOptions& o);  // junit.cpp
std::unique_ptr<CheckReporter> json_reporter(const CheckOptions& o);   // report_json.cpp
std::unique_ptr<CheckReporter> html_reporter(const CheckOptions& o);   // html_report.cpp

class CheckPipeline final : public CaseStream {
 public:
  CheckPipeline(const CheckOptions& o, CheckRun& run, const std::vector<BackendSlot>& slots,
                std::vector<std::unique_ptr<CheckReporter>> reporters);

  void sweep_started(const Sweep& sweep) override;
  void case_reached() override;
  bool result(size_t slot, const CaseResult& r, const CaseRun& c) override;
  void case_finished(const CaseRun& c) override;
  void sweep_finished() override;

  void cases_ended();
  // Settles the expectations and lets every reporter write its end.
  void finish(const FinishedRun& end);

 private:
  void record(const CaseVerdict& v, Group& g);
  std::span<const Group> sweep_groups() const;

  const CheckOptions& o_;
  CheckRun& run_;
  const std::vector<BackendSlot>& slots_;
  std::vector<std::unique_ptr<CheckReporter>> reporters_;
  Expectations expectations_;
  std::vector<std::vector<std::string>> capabilities_;  // each backend's, for the capability paths
  size_t first_ = 0;  // the sweep's first group
};

}  // namespace ts
