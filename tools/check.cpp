// touchstone check's sweep over operators x backends x dtypes, as a pipeline: the executor
// (tools/check_executor.h) streams each case's results to the pipeline (tools/check_pipeline.h),
// which marks, records and reports them; then the smallest failures are shrunk and every reporter
// writes its end. Cases are made, judged and forgotten one at a time: what stays is
// tools/check_run.h, and the JSON and JUnit reports stream their cases to temporary files.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "gpu/plans/registry.h"
#include "tools/check_pipeline.h"
#include "tools/interrupt.h"
#include "tools/report_json.h"
#include "tools/shrink.h"

namespace ts {
namespace {

// Shrinks each group's smallest drawn failure on its backend; the smaller failure it finds, if any,
// becomes what the group shows first.
void shrink_groups(CheckRun& run, const CheckOptions& o, const InterruptGuard& guard) {
  for (Group& g : run.groups) {
    if (!g.smallest_drawn || !g.slot->backend || guard.signal()) continue;
    const Failure& start = *g.smallest_drawn;
    if (!o.quiet) std::fprintf(stderr, "  shrinking the smallest failure of %s...\n", g.name.c_str());
    Sweep sweep(*find_op(g.op), *parse_dtype(g.dtype), o.cases, o.seed);
    auto shrunk = shrink_failure(sweep, start.k, *g.slot->backend, start.outcome, ShrinkBudget{},
                                 [&] { return guard.signal() != 0; });
    if (!shrunk) continue;
    Failure f;
    CaseNote note{g.name, -1, Mark::none, nullptr, true, shrunk->elements, o.backends.kernels.dir};
    f.json = case_json(shrunk->result, note);
    f.outcome = shrunk->result.outcome, f.id = shrunk->result.id, f.detail = shrunk->result.detail;
    f.elements = shrunk->elements;
    f.shrunk_from = start.id;
    f.shrink_steps = shrunk->steps;
    if (!g.smallest || f.smaller_than(*g.smallest)) g.smallest = std::move(f);
  }
}

std::vector<std::unique_ptr<CheckReporter>> reporters(const CheckOptions& o, const CheckRun& run,
                                                      const std::vector<BackendSlot>& slots) {
  const bool live = !o.quiet && ::isatty(2);  // the live line, on a terminal
  std::vector<std::unique_ptr<CheckReporter>> all;
  all.push_back(progress_reporter(o, run.plan, live));
  all.push_back(console_reporter(o, slots, live, !o.junit.empty() || !o.json.empty()));
  if (!o.junit.empty()) all.push_back(junit_reporter(o));
  if (!o.json.empty()) all.push_back(json_reporter(o));
  if (!o.html.empty()) all.push_back(html_reporter(o));
  return all;
}

}  // namespace

int run_check(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart* started) {
  std::unique_ptr<CheckStart, CheckStartDeleter> own;
  if (!started) started = (own = start_check(o)).get();
  CheckRun run;
  run.plan = sweep_plan(o);
  if (!o.xfail.empty()) run.xfail = XfailList::load(o.xfail);
  if (!o.expect.empty()) {
    run.expect = DeviceProfile::load(o.expect);
    if (int rc = check_capabilities(*run.expect, slots)) return rc;
  }
  run.started = utc_now();
  CheckPipeline pipeline(o, run, slots, reporters(o, run, slots));
  InterruptGuard guard;
  const auto t0 = std::chrono::steady_clock::now();
  CheckExecutor executor(o, slots, *started);
  executor.run(pipeline, guard);
  pipeline.cases_ended();
  shrink_groups(run, o, guard);  // does nothing once a signal came
  const int sig = guard.signal();
  if (sig) {
    run.state = "interrupted";
    run.stop_reason = cat("interrupted by ", signal_name(sig), " after ", run.runs, " case runs");
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  pipeline.finish(FinishedRun(o, run, slots));
  if (sig) {
    std::fprintf(stderr, "touchstone check: interrupted by %s after %lld case runs; %s\n", signal_name(sig), run.runs,
                 !o.junit.empty() || !o.json.empty() ? "the partial reports, marked interrupted, are written"
                                                      : "results above are partial");
    return 128 + sig;
  }
  bool bad = run.state == "stopped";
  for (const Group& g : run.groups) bad |= g.bad();
  return bad ? 1 : 0;
}

}  // namespace ts
