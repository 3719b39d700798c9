// touchstone check: the differential sweep over operators x backends x dtypes. Cases are made,
// judged and forgotten one at a time: what stays is a tally per group, the failing cases (up to
// kFailingShown per group) and the JUnit testcases, which stream to temporary files.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include "core/registry.h"
#include "core/runner.h"
#include "goldens/files.h"
#include "tools/backends.h"
#include "tools/commands.h"
#include "reference/coverage.h"
#include "tools/interrupt.h"
#include "tools/junit.h"
#include "tools/sweep.h"

namespace ts {
namespace {

constexpr size_t kFailingShown = 200;  // per group; the JUnit report holds every one
constexpr double kProgressSeconds = 2;

bool is_failure(Outcome o) { return o != Outcome::pass && o != Outcome::rejected && o != Outcome::unsupported; }

struct Tally {
  long long cases = 0, pass = 0, fail = 0, rejected = 0, unsupported = 0, error = 0, mismatch = 0;
  double worst = 0, seconds = 0;
  void add(const CaseResult& r) {
    ++cases;
    seconds += r.seconds;
    switch (r.outcome) {
      case Outcome::pass: ++pass; worst = std::max(worst, r.worst); break;
      case Outcome::fail: ++fail; break;
      case Outcome::rejected: ++rejected; break;
      case Outcome::unsupported: ++unsupported; break;
      case Outcome::error: ++error; break;
      default: ++mismatch; break;  // UNEXPECTED_REJECT / MISSED_REJECT
    }
  }
  bool bad() const { return fail || error || mismatch; }
};

struct Failing {
  Outcome outcome;
  std::string id, backend, detail;
};

// One row of the table: an op/backend/dtype.
struct Group {
  std::string name;
  const BackendSlot* slot;
  Tally tally;
  std::vector<Failing> failing;
  size_t junit = 0;
};

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += cat(s.empty() ? "" : ", ", dtype_name(t));
  return s;
}

// The operators and, per operator, the dtypes to sweep. Every usage error is found here, before a
// backend opens: unknown operators and dtypes, and a dtype a named operator does not define. With
// no --op, an operator that does not define a requested dtype is left out of that dtype's sweep.
std::vector<std::pair<const OpDef*, std::vector<DType>>> sweep_plan(const CheckOptions& o) {
  std::vector<const OpDef*> ops;
  for (auto& n : o.ops) {
    const OpDef* op = find_op(n);
    if (!op) throw UsageError(cat("unknown operator '", n, "' (see touchstone list)"));
    ops.push_back(op);
  }
  const bool named_ops = !ops.empty();
  if (!named_ops) ops = all_ops();
  std::vector<DType> dtypes;
  for (auto& d : o.dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw UsageError(cat("unknown dtype '", d, "' (dtypes: float32, float16, bfloat16)"));
    dtypes.push_back(*t);
  }
  std::vector<std::pair<const OpDef*, std::vector<DType>>> plan;
  for (const OpDef* op : ops) {
    std::vector<DType> mine;
    for (DType t : dtypes.empty() ? op->dtypes : dtypes) {
      const bool defined = std::find(op->dtypes.begin(), op->dtypes.end(), t) != op->dtypes.end();
      if (defined) mine.push_back(t);
      else if (named_ops)
        throw UsageError(cat("operator ", op->name, " does not define dtype ", dtype_name(t), " (its dtypes: ",
                             dtype_list(op->dtypes), ")"));
    }
    if (!mine.empty()) plan.push_back({op, mine});
  }
  for (DType t : dtypes)
    if (std::none_of(plan.begin(), plan.end(), [&](auto& p) {
          return std::find(p.second.begin(), p.second.end(), t) != p.second.end();
        }))
      throw UsageError(cat("no operator defines dtype ", dtype_name(t), " (see touchstone list)"));
  return plan;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string rerun_line(const CaseResult& r) { return cat("touchstone repro '", r.id, "' --backend ", r.backend); }

}  // namespace

int cmd_check(const CheckOptions& o) {
  const auto plan = sweep_plan(o);
  backend_names(o.backends);
  if (!o.junit.empty()) check_output_path(o.junit);  // before minutes of sweeping, not after
  std::vector<BackendSlot> slots = open_backends(o.backends);
  if (int rc = report_backends(slots, " (see touchstone list)")) return rc;

  std::optional<JUnitReport> junit;
  if (!o.junit.empty()) {
    junit.emplace(o.junit, rerun_line);
    junit->mark_started("touchstone check");
  }
  InterruptGuard guard;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Group> groups;
  std::map<std::string, std::map<std::string, long long>> coverage;  // op -> class -> cases
  uint64_t index = 0;
  long long runs = 0;
  bool stopped = false;
  for (auto& [op, dtypes] : plan) {
    for (DType t : dtypes) {
      if (stopped) break;
      const std::string label = cat(op->name, "/", dtype_name(t));
      Sweep sweep(*op, t, o.cases, o.seed);
      for (auto& cls : expected_classes(*op)) coverage[op->name][cls] += 0;
      const size_t first = groups.size();
      for (auto& s : slots) {
        Group g{cat(op->name, "/", s.name, "/", dtype_name(t)), &s, {}, {}, 0};
        if (junit) {
          g.junit = junit->add_group(g.name);
          if (!s.backend) {
            CaseResult r;
            r.id = "backend unavailable";
            r.backend = s.name;
            r.outcome = Outcome::unsupported;
            r.detail = cat(s.name, " UNAVAILABLE on this machine: ", s.unavailable);
            junit->add(g.junit, r);
          }
        }
        groups.push_back(std::move(g));
      }
      auto last_progress = std::chrono::steady_clock::now();
      for (int64_t k = 0; k < sweep.size() && !stopped; ++k) {
        if (index++ % o.shards != o.shard) continue;
        Expected e = prepare(sweep.at(k));
        for (size_t s = 0; s < slots.size() && !stopped; ++s) {
          if (!slots[s].backend) continue;
          CaseResult r = judge(e, *slots[s].backend);
          if (guard.signal()) {  // the case may have been disturbed (a worker got the signal too)
            stopped = true;
            break;
          }
          Group& g = groups[first + s];
          g.tally.add(r);
          ++runs;
          if (junit) junit->add(g.junit, r);
          if (is_failure(r.outcome) && g.failing.size() < kFailingShown)
            g.failing.push_back({r.outcome, r.id, r.backend, r.detail});
        }
        if (stopped || guard.signal()) {
          stopped = true;
          break;
        }
        for (auto& cls : case_classes(e)) coverage[op->name][cls]++;
        coverage[op->name][cat("dtype ", dtype_name(t))]++;
        if (!o.quiet && since(last_progress) >= kProgressSeconds) {
          last_progress = std::chrono::steady_clock::now();
          std::fprintf(stderr, "  %-32s %lld of %lld cases...\n", label.c_str(), (long long)k + 1,
                       (long long)sweep.size());
        }
      }
      if (!o.quiet)
        for (size_t s = first; s < groups.size(); ++s)
          if (groups[s].slot->backend)
            std::fprintf(stderr, "  %-32s %4lld cases  %.2fs\n", groups[s].name.c_str(), groups[s].tally.cases,
                         groups[s].tally.seconds);
    }
  }
  const double secs = since(t0);

  std::printf("\n%-34s %6s %6s %6s %8s %11s %6s %9s %11s\n", "op/backend/dtype", "cases", "pass", "fail", "rejected",
              "unsupported", "error", "mismatch", "worst/tol");
  bool bad = false;
  for (auto& g : groups) {
    if (!g.slot->backend) {
      std::printf("%-34s UNAVAILABLE: %s\n", g.name.c_str(), g.slot->unavailable.c_str());
      continue;
    }
    const Tally& t = g.tally;
    bad |= t.bad();
    std::printf("%-34s %6lld %6lld %6lld %8lld %11lld %6lld %9lld %11.3g\n", g.name.c_str(), t.cases, t.pass, t.fail,
                t.rejected, t.unsupported, t.error, t.mismatch, t.worst);
  }
  std::printf("\n%lld case runs in %.1f s (%.0f per second)%s%s\n", runs, secs, secs > 0 ? double(runs) / secs : 0.0,
              o.shards > 1 ? cat(", shard ", o.shard, "/", o.shards).c_str() : "",
              stopped ? cat(", INTERRUPTED by ", signal_name(guard.signal()), ": partial results").c_str() : "");
  std::printf("\nCoverage (cases per class, over all dtypes; 0 = the sweep missed it):\n");
  for (auto& [op, classes] : coverage) {
    std::string line;
    for (auto& [cls, n] : classes) line += cat(line.empty() ? "" : ", ", cls, " ", n);
    std::printf("  %-12s %s\n", op.c_str(), line.c_str());
  }
  bool any_failing = false;
  for (auto& g : groups) {
    if (g.failing.empty()) continue;
    if (!any_failing) std::printf("\nFailing cases (paste a line to reproduce):\n");
    any_failing = true;
    for (const Failing& f : g.failing)
      std::printf("%-17s touchstone repro '%s' --backend %s\n    %s\n", std::string(outcome_name(f.outcome)).c_str(),
                  f.id.c_str(), f.backend.c_str(), f.detail.c_str());
    const long long all = g.tally.fail + g.tally.error + g.tally.mismatch;
    if (all > (long long)g.failing.size())
      std::printf("  ... and %lld more failing cases in %s%s\n", all - (long long)g.failing.size(), g.name.c_str(),
                  junit ? " (all of them are in the JUnit report)" : " (--junit FILE lists all of them)");
  }
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
  const int sig = guard.signal();
  if (junit)
    junit->finish(stopped ? cat("touchstone check was interrupted by ", signal_name(sig), " after ", runs,
                                " case runs: this report is partial")
                          : "");
  if (stopped) {
    std::fprintf(stderr, "touchstone check: interrupted by %s after %lld case runs; %s\n", signal_name(sig), runs,
                 junit ? cat("the partial JUnit report, marked interrupted, is in ", o.junit).c_str()
                       : "results above are partial");
    return 128 + sig;
  }
  return bad ? 1 : 0;
}

}  // namespace ts
