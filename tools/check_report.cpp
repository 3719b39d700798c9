// The head of check's JSON report (tools/REPORT_SCHEMA.md): everything but the cases.
#include "core/contract.h"
#include "properties/generators.h"
#include "tools/check_run.h"
#include "tools/report_json.h"

namespace ts {

using nlohmann::json;

json sweep_json(const CheckOptions& o, const SweepPlan& plan) {
  json p = json::array();
  for (auto& [op, dtypes] : plan) {
    json ds = json::array();
    for (DType t : dtypes) ds.push_back(dtype_name(t));
    p.push_back({{"op", op->name}, {"dtypes", ds}});
  }
  return {{"plan", p},
          {"cases", o.cases},
          {"seed", o.seed},
          {"match", o.match.empty() ? json() : json(o.match)},
          {"draw_version", kSweepVersion}};
}

json group_json(const Group& g) {
  json j = {{"name", g.name}, {"op", g.op}, {"backend", g.backend}, {"dtype", g.dtype},
            {"available", g.slot && g.slot->backend != nullptr}, {"tally", tally_json(g.tally)}};
  if (g.pattern) {
    j["pattern"] = xfail_json(*g.pattern);
    j["pattern_stale"] = g.pattern_stale ? json(*g.pattern_stale) : json();
  }
  if (g.smallest) {
    json s = {{"case", g.smallest->json}};
    if (!g.smallest->shrunk_from.empty()) {
      s["shrunk_from"] = g.smallest->shrunk_from;
      s["shrink_steps"] = g.smallest->shrink_steps;
    }
    j["smallest_failing"] = std::move(s);
  }
  return j;
}

// The device profile the run held its backends to: null, or {"profile", "source", "backends"}.
json expect_json(const std::optional<DeviceProfile>& p) {
  if (!p) return nullptr;
  return {{"profile", p->name}, {"source", p->source}, {"backends", p->require}};
}

json run_head(const CheckOptions& o, const CheckRun& run, const std::vector<BackendSlot>& slots) {
  json devices = json::array();
  for (auto& s : slots) {
    if (s.backend) {
      const DeviceInfo info = s.backend->info();
      devices.push_back(device_json(s.name, &info, ""));
    } else {
      devices.push_back(device_json(s.name, nullptr, s.unavailable));
    }
  }
  json groups = json::array();
  Tally total;
  bool bad = run.state != "complete";
  for (const Group& g : run.groups) {
    groups.push_back(group_json(g));
    total.add(g.tally);
    bad |= g.bad();
  }
  json totals = tally_json(total);
  totals["case_runs"] = run.runs;
  totals["gate"] = bad ? "fail" : "pass";
  json xfail = json();
  if (!run.xfail.empty()) {
    xfail = {{"file", o.xfail}, {"entries", json::array()}};
    for (auto& e : run.xfail.entries()) xfail["entries"].push_back(xfail_json(e));
  }
  json head = {{"schema", kReportSchema},
               {"state", run.state},
               {"tool", {{"command", "check"}}},
               {"started", run.started},
               {"seconds", run.seconds},
               {"sweep", sweep_json(o, run.plan)},
               {"shard", {{"index", o.shard}, {"count", o.shards}}},
               {"xfail", xfail},
               {"devices", devices},
               {"kernels", kernels_json(o.backends.kernels)},
               {"expect", expect_json(run.expect)},
               {"groups", groups},
               {"coverage", run.coverage},
               {"totals", totals}};
  if (run.state != "complete") head["stop_reason"] = run.stop_reason;
  return head;
}

}  // namespace ts
