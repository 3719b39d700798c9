// touchstone check: what is checked before anything opens, then the backends opened for the sweep
// (the sweep itself: tools/check.cpp).
#include <array>
#include <cstdio>

#include "core/contract.h"
#include "goldens/files.h"
#include "tools/backends.h"
#include "tools/check_run.h"
#include "tools/commands.h"
#include "tools/device_profile.h"
#include "tools/shell_quote.h"
#include "tools/xfail.h"

namespace ts {
namespace {

// A --match that selects no case of the sweep (all shards together: one shard of a narrow filter
// may rightly get none) is a usage error. Stops at the first match, so only a filter that selects
// nothing draws the whole sweep before the run.
void require_a_match(const CheckOptions& o, const SweepPlan& plan, const Match& match) {
  if (!match) return;
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      Sweep sweep(*op, t, o.cases, o.seed);
      for (int64_t k = 0; k < sweep.size(); ++k)
        if (match->search(sweep.at(k).id())) return;
    }
  throw UsageError(cat("--match ", shell_quote(o.match), " selects no case of the sweep (", plan.size(),
                       " operators, ", o.cases, " cases per dtype): nothing would run"));
}

// check --list: the ids the sweep would run, one a line; nothing opens, nothing runs.
int list_cases(const CheckOptions& o, const SweepPlan& plan) {
  for_each_case(o, plan, [](uint64_t, const OpDef&, DType, const std::string& id) { std::printf("%s\n", id.c_str()); });
  return std::fflush(stdout) == 0 ? 0 : 2;
}

}  // namespace

int cmd_check(const CheckOptions& o) {
  const SweepPlan plan = sweep_plan(o);
  const auto match = match_regex(o.match);
  require_a_match(o, plan, match);
  if (o.list) {
    for (auto [name, file] : {std::pair{"--junit", &o.junit}, {"--json", &o.json}, {"--html", &o.html}})
      if (!file->empty()) throw UsageError(cat("--list runs nothing, so ", name, " would have nothing to report"));
    return list_cases(o, plan);
  }
  backend_names(o.backends);
  if (!o.xfail.empty()) {  // its usage errors before anything opens
    std::vector<std::array<std::string, 3>> groups;
    for (auto& [op, dtypes] : plan)
      for (DType t : dtypes)
        for (const std::string& b : backend_names(o.backends)) groups.push_back({op->name, b, std::string(dtype_name(t))});
    XfailList::load(o.xfail).require_reachable(groups);
  }
  if (!o.expect.empty()) DeviceProfile::load(o.expect);
  for (const std::string* out : {&o.junit, &o.json, &o.html})
    if (!out->empty()) check_output_path(*out);  // before minutes of sweeping, not after
  // The large cases' references are computed while the backends open (both take about a second).
  auto started = start_check(o);
  std::vector<BackendSlot> slots = open_backends(o.backends);
  if (int rc = report_backends(slots, " (see touchstone list)")) return rc;
  print_kernels(o.backends.kernels);
  return run_check(o, slots, started.get());
}

}  // namespace ts
