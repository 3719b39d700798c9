// touchstone check: the differential sweep over operators x backends x dtypes.
#include <chrono>
#include <cstdio>
#include <map>

#include "core/registry.h"
#include "core/runner.h"
#include "tools/backends.h"
#include "tools/commands.h"
#include "reference/coverage.h"
#include "tools/junit.h"
#include "tools/sweep.h"

namespace ts {
namespace {

struct Tally {
  int cases = 0, pass = 0, fail = 0, rejected = 0, unsupported = 0, error = 0, mismatch = 0;
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

std::vector<const OpDef*> select_ops(Args& a) {
  std::vector<const OpDef*> ops;
  for (auto& n : a.list("--op")) {
    const OpDef* op = find_op(n);
    if (!op) throw UsageError(cat("unknown operator '", n, "' (see touchstone list)"));
    ops.push_back(op);
  }
  return ops.empty() ? all_ops() : ops;
}

std::pair<int, int> parse_shard(const std::string& s) {
  int i = 0, n = 1;
  if (!s.empty() && (std::sscanf(s.c_str(), "%d/%d", &i, &n) != 2 || n < 1 || i < 0 || i >= n))
    throw UsageError(cat("--shard must be i/n with 0 <= i < n, got '", s, "'"));
  return {i, n};
}

}  // namespace

int cmd_check(Args& a) {
  std::vector<const OpDef*> ops = select_ops(a);
  std::vector<DType> dtypes;
  for (auto& d : a.list("--dtype")) {
    auto t = parse_dtype(d);
    if (!t) throw UsageError(cat("unknown dtype '", d, "'"));
    dtypes.push_back(*t);
  }
  int count = int(a.integer("--cases", 200));
  uint64_t seed = uint64_t(a.integer("--seed", 1));
  auto [shard, shards] = parse_shard(a.value("--shard", ""));
  std::string junit = a.value("--junit", "");
  bool quiet = a.flag("--quiet");
  std::vector<BackendSlot> slots = open_backends(a);
  a.finish();

  int usable = 0;
  for (auto& s : slots) {
    if (s.backend) {
      DeviceInfo info = s.backend->info();
      std::printf("backend %-7s %s\n", s.name.c_str(), info.name.c_str());
      ++usable;
    } else {
      std::printf("backend %-7s UNAVAILABLE: %s\n", s.name.c_str(), s.unavailable.c_str());
    }
  }
  for (auto& s : slots)
    if (!s.backend && s.requested) return std::fprintf(stderr, "error: backend %s is unavailable\n", s.name.c_str()), 2;
  if (!usable) return std::fprintf(stderr, "error: no GPU backend is available on this machine\n"), 2;

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, std::vector<CaseResult>>> groups;
  std::map<std::string, Tally> tallies;
  std::vector<const CaseResult*> failing;
  std::map<std::string, std::map<std::string, int>> coverage;  // op -> class -> cases
  uint64_t index = 0;
  for (const OpDef* op : ops) {
    for (DType t : dtypes.empty() ? op->dtypes : dtypes) {
      std::vector<Case> cases = sweep_cases(*op, t, count, seed);
      for (auto& cls : expected_classes(*op)) coverage[op->name][cls] += 0;
      std::vector<size_t> group_of_slot;
      for (auto& s : slots) {
        group_of_slot.push_back(groups.size());
        groups.push_back({cat(op->name, "/", s.name, "/", dtype_name(t)), {}});
      }
      for (const Case& c : cases) {
        if (index++ % uint64_t(shards) != uint64_t(shard)) continue;
        Expected e = prepare(c);
        for (auto& cls : case_classes(e)) coverage[op->name][cls]++;
        coverage[op->name][cat("dtype ", dtype_name(t))]++;
        for (size_t k = 0; k < slots.size(); ++k)
          if (slots[k].backend) groups[group_of_slot[k]].second.push_back(judge(e, *slots[k].backend));
      }
      for (size_t k = 0; k < slots.size(); ++k) {
        auto& [name, results] = groups[group_of_slot[k]];
        for (auto& r : results) tallies[name].add(r);
        if (!quiet && slots[k].backend)
          std::fprintf(stderr, "  %-32s %4zu cases  %.2fs\n", name.c_str(), results.size(), tallies[name].seconds);
      }
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("\n%-34s %6s %6s %6s %8s %11s %6s %9s %11s\n", "op/backend/dtype", "cases", "pass", "fail", "rejected",
              "unsupported", "error", "mismatch", "worst/tol");
  int total = 0;
  bool bad = false;
  for (auto& [name, results] : groups) {
    const std::string backend = name.substr(name.find('/') + 1, name.rfind('/') - name.find('/') - 1);
    auto slot = std::find_if(slots.begin(), slots.end(), [&](auto& s) { return s.name == backend; });
    if (!slot->backend) {
      std::printf("%-34s UNAVAILABLE: %s\n", name.c_str(), slot->unavailable.c_str());
      continue;
    }
    Tally& t = tallies[name];
    total += t.cases;
    bad |= t.bad();
    std::printf("%-34s %6d %6d %6d %8d %11d %6d %9d %11.3g\n", name.c_str(), t.cases, t.pass, t.fail, t.rejected,
                t.unsupported, t.error, t.mismatch, t.worst);
    for (auto& r : results)
      if (r.outcome != Outcome::pass && r.outcome != Outcome::rejected && r.outcome != Outcome::unsupported)
        failing.push_back(&r);
  }
  std::printf("\n%d case runs in %.1f s (%.0f per second)%s\n", total, secs, secs > 0 ? total / secs : 0.0,
              shards > 1 ? cat(", shard ", shard, "/", shards).c_str() : "");
  std::printf("\nCoverage (cases per class, over all dtypes; 0 = the sweep missed it):\n");
  for (auto& [op, classes] : coverage) {
    std::string line;
    for (auto& [cls, n] : classes) line += cat(line.empty() ? "" : ", ", cls, " ", n);
    std::printf("  %-12s %s\n", op.c_str(), line.c_str());
  }
  if (!failing.empty()) {
    std::printf("\nFailing cases (paste a line to reproduce):\n");
    for (const CaseResult* r : failing)
      std::printf("%-17s touchstone repro '%s' --backend %s\n    %s\n", std::string(outcome_name(r->outcome)).c_str(),
                  r->id.c_str(), r->backend.c_str(), r->detail.c_str());
  }
  if (!junit.empty())
    write_junit(junit, groups, [](const CaseResult& r) { return cat("touchstone repro '", r.id, "' --backend ", r.backend); });
  return bad ? 1 : 0;
}

}  // namespace ts
