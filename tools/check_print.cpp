// What check prints: while it runs, a line per group when its sweep ends (and off a terminal, a
// line every few seconds of a long sweep) on stderr; at the end the summary on stdout: one row per
// op/backend/dtype, the coverage of shape classes, then per failing group its smallest failure
// (shrunk) as a line to paste and a count of the rest.
#include <chrono>
#include <cstdio>

#include "core/contract.h"
#include "tools/check_pipeline.h"
#include "tools/check_run.h"
#include "tools/report_json.h"

namespace ts {

void print_summary(const CheckOptions& o, const CheckRun& run, const std::vector<BackendSlot>& slots, bool reports) {
  const bool marks = !run.xfail.empty();
  std::printf("\n%-34s %6s %6s %6s %8s %11s %6s %9s", "op/backend/dtype", "cases", "pass", "fail", "rejected",
              "unsupported", "error", "mismatch");
  if (marks) std::printf(" %6s %6s", "xfail", "xpass");
  const bool expect = run.expect.has_value();
  if (expect) std::printf(" %11s", "unexp-unsup");
  std::printf(" %11s\n", "worst/tol");
  for (const Group& g : run.groups) {
    if (!g.slot->backend) {
      std::printf("%-34s UNAVAILABLE: %s\n", g.name.c_str(), g.slot->unavailable.c_str());
      continue;
    }
    const Tally& t = g.tally;
    std::printf("%-34s %6lld %6lld %6lld %8lld %11lld %6lld %9lld", g.name.c_str(), t.cases, t.pass, t.fail, t.rejected,
                t.unsupported, t.error, t.mismatch);
    if (marks) std::printf(" %6lld %6lld", t.xfail, t.xpass + (g.pattern_stale.value_or(false) ? 1 : 0));
    if (expect) std::printf(" %11lld", t.unexpected_unsupported);
    std::printf(" %11.3g\n", t.worst);
  }
  std::printf("\n%lld case runs in %.1f s (%.0f per second)%s%s\n", run.runs, run.seconds,
              run.seconds > 0 ? double(run.runs) / run.seconds : 0.0,
              o.shards > 1 ? cat(", shard ", o.shard, "/", o.shards).c_str() : "",
              run.state == "complete" ? ""
                                      : cat(", ", run.state == "stopped" ? "STOPPED" : "INTERRUPTED", " (", run.stop_reason,
                                            "): partial results").c_str());
  // What the sweep compiled: the cost of a cold run (caches: README "Caches").
  for (const BackendSlot& s : slots)
    if (s.backend && s.backend->pipelines_new + s.backend->pipelines_reused)
      std::printf("%s pipelines: %llu compiled, %llu reused\n", s.name.c_str(),
                  (unsigned long long)s.backend->pipelines_new, (unsigned long long)s.backend->pipelines_reused);
  std::printf("\nCoverage (cases per class, over all dtypes; 0 = the sweep missed it):\n");
  for (auto& [op, classes] : run.coverage) {
    std::string line;
    for (auto& [cls, n] : classes) line += cat(line.empty() ? "" : ", ", cls, " ", n);
    std::printf("  %-12s %s\n", op.c_str(), line.c_str());
  }
  if (!run.paths.empty()) {
    std::printf("\nCapability paths (cases that ran each, per backend; odd seeds take the fallbacks):\n");
    for (auto& [backend, paths] : run.paths) {
      std::string line;
      for (auto& [path, n] : paths) line += cat(line.empty() ? "" : ", ", path, " ", n);
      std::printf("  %-12s %s\n", backend.c_str(), line.c_str());
    }
  }

  bool any = false;
  for (const Group& g : run.groups) {
    if (!g.smallest) continue;
    if (!any) std::printf("\nFailing cases, the smallest of each group first (paste a line to reproduce):\n");
    any = true;
    const Failure& f = *g.smallest;
    std::printf("%-17s %s\n    %s\n", std::string(outcome_name(f.outcome)).c_str(), repro_line(f.id, g.backend, o.backends.kernels.dir).c_str(),
                f.detail.c_str());
    if (!f.shrunk_from.empty())
      std::printf("    (shrunk in %d steps from '%s', the smallest failure of the sweep)\n", f.shrink_steps,
                  f.shrunk_from.c_str());
    const long long rest = g.tally.failing() - (f.shrunk_from.empty() ? 1 : 0);
    if (rest > 0)
      std::printf("  ... %s %lld%s failing case%s in %s%s\n", f.shrunk_from.empty() ? "and" : "the sweep met", rest,
                  f.shrunk_from.empty() ? " more" : "", rest == 1 ? "" : "s", g.name.c_str(),
                  reports ? " (the reports list every one)" : " (--json FILE or --junit FILE lists every one)");
  }

  bool xpass = false;
  for (const Group& g : run.groups) {
    for (auto& [id, e] : g.xpassed) {
      if (!xpass) std::printf("\nListed as known failures but passed (XPASS: remove them from the list):\n");
      xpass = true;
      std::printf("XPASS             %s\n    %s: %s\n", repro_line(id, g.backend, o.backends.kernels.dir).c_str(), e->where.c_str(), e->reason.c_str());
    }
    if (g.tally.xpass > (long long)g.xpassed.size())
      std::printf("  ... and %lld more XPASS cases in %s\n", g.tally.xpass - (long long)g.xpassed.size(), g.name.c_str());
    if (g.pattern_stale.value_or(false)) {
      if (!xpass) std::printf("\nListed as known failures but passed (XPASS: remove them from the list):\n");
      xpass = true;
      std::printf("XPASS             pattern %s (%s: %s): %s ran %lld cases without a failure\n", g.pattern->entry.c_str(),
                  g.pattern->where.c_str(), g.pattern->reason.c_str(), g.name.c_str(), g.tally.cases);
    }
  }
  bool unexpected = false;
  for (const Group& g : run.groups) {
    for (const Group::Unexpected& u : g.unexpected) {
      if (!unexpected)
        std::printf("\nUNSUPPORTED for a capability device profile %s requires (UNEXPECTED_UNSUPPORTED: fails the "
                    "run):\n", run.expect->name.c_str());
      unexpected = true;
      std::printf("UNEXPECTED_UNSUPPORTED %s\n    %s: %s\n", repro_line(u.id, g.backend, o.backends.kernels.dir).c_str(),
                  u.capability.c_str(), u.detail.c_str());
    }
    if (g.tally.unexpected_unsupported > (long long)g.unexpected.size())
      std::printf("  ... and %lld more UNEXPECTED_UNSUPPORTED cases in %s\n",
                  g.tally.unexpected_unsupported - (long long)g.unexpected.size(), g.name.c_str());
  }
  bool xfail = false;
  for (const Group& g : run.groups) {
    if (!g.tally.xfail) continue;
    if (!xfail) std::printf("\nKnown failures (XFAIL, not failing the gate):\n");
    xfail = true;
    std::printf("  %-32s %lld XFAIL%s\n", g.name.c_str(), g.tally.xfail,
                g.pattern ? cat(" (", g.pattern->where, ": ", g.pattern->reason, ")").c_str() : "");
  }
  if (marks && o.shards > 1)
    std::printf("\nA shard sees part of each group: whether a known-failure pattern is stale (XPASS) is decided by "
                "`touchstone merge` over every shard's --json.\n");

  run.user_kernels.print();
  // A default run that could not reach a backend says so at the end, where a reader looks: its
  // kernels were not checked at all.
  for (auto& s : slots)
    if (!s.backend) {
      const std::string warn = cat("WARNING: backend ", s.name, " was UNAVAILABLE (", s.unavailable,
                                   "): none of its kernels were checked. Name the backends you expect with "
                                   "--backend (ci/check.sh: TS_BACKENDS) to make this an error.");
      std::printf("\n%s\n", warn.c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "%s\n", warn.c_str());
    }
  std::fflush(stdout);
}

namespace {

class ConsoleReporter : public CheckReporter {
 public:
  ConsoleReporter(const CheckOptions& o, const std::vector<BackendSlot>& slots, bool live, bool reports)
      : o_(o), slots_(slots), live_(live), reports_(reports) {}

  void sweep_started(const Sweep&, std::span<const Group>) override { last_ = std::chrono::steady_clock::now(); }

  // Off a terminal the live line is not drawn: a long sweep says how far it got now and then.
  void case_finished(const CaseRun& c) override {
    if (o_.quiet || live_) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() < kProgressSeconds) return;
    last_ = now;
    const std::string label = cat(c.sweep.op().name, "/", dtype_name(c.sweep.dtype()));
    std::fprintf(stderr, "  %-32s %lld of %lld cases...\n", label.c_str(), (long long)c.k + 1, (long long)c.sweep.size());
  }

  void sweep_finished(std::span<const Group> groups) override {
    if (o_.quiet) return;
    for (const Group& g : groups)
      if (g.slot->backend)
        std::fprintf(stderr, "  %-32s %4lld cases  %.2fs\n", g.name.c_str(), g.tally.cases, g.tally.seconds);
  }

  void run_finished(const FinishedRun& end) override { print_summary(o_, end.run, slots_, reports_); }

 private:
  static constexpr double kProgressSeconds = 2;
  const CheckOptions& o_;
  const std::vector<BackendSlot>& slots_;
  const bool live_, reports_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

std::unique_ptr<CheckReporter> console_reporter(const CheckOptions& o, const std::vector<BackendSlot>& slots,
                                                bool live, bool reports) {
  return std::make_unique<ConsoleReporter>(o, slots, live, reports);
}

}  // namespace ts
