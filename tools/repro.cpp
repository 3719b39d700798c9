// touchstone repro CASE_ID: one case, the whole story.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "core/rng.h"
#include "core/runner.h"
#include "goldens/files.h"
#include "gpu/plans/registry.h"
#include "tools/backends.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/help_examples.h"
#include "tools/report_json.h"
#include "tools/shrink.h"

namespace ts {
namespace {

uint64_t digest(const Tensor& t) {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size()));
}

// The indices of each dimension holding most mismatches, e.g. "dim 3: 126 (8), 127 (8)".
void print_concentration(const CompareReport& r) {
  for (size_t d = 0; d < r.bad_per_dim.size(); ++d) {
    const auto& counts = r.bad_per_dim[d];
    std::vector<size_t> idx(counts.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return counts[x] > counts[y]; });
    size_t hit = size_t(std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }));
    std::printf("      dim %zu: mismatches at %zu of %zu indices;", d, hit, counts.size());
    for (size_t k = 0; k < std::min<size_t>(5, hit); ++k) std::printf(" %zu (%lld)", idx[k], (long long)counts[idx[k]]);
    std::printf("\n");
  }
}

}  // namespace

int cmd_repro(const ReproOptions& o) {
  backend_names(o.backends);  // usage errors before the case is built
  Case c = parse_case(o.id);
  std::vector<BackendSlot> slots = open_backends(o.backends);
  Expected e = prepare(c);
  std::printf("case     %s\n", c.id().c_str());
  print_kernels(o.backends.kernels);
  if (!e.error.empty()) {
    std::printf("ERROR    %s\n", e.error.c_str());
    return 1;
  }
  for (auto& [name, t] : e.problem.inputs)
    std::printf("input    %-10s %-24s fnv1a64=%016llx\n", name.c_str(), t.describe().c_str(), (unsigned long long)digest(t));
  if (!e.problem.params.empty()) std::printf("params   %s\n", e.problem.params.dump().c_str());
  if (e.violation) std::printf("reference rejects: %s\n", e.violation->message.c_str());
  else std::printf("reference ok; tolerance atol %g rtol %g\n", e.tol.atol, e.tol.rtol);
  for (auto& [name, b] : e.tol.elem) {  // the kernel's own arithmetic, per element (gpu/plans/*.cpp)
    double lo = INFINITY, hi = 0;
    for (double v : b->values()) lo = std::min(lo, v), hi = std::max(hi, v);
    if (b->numel()) std::printf("         + per-element bound of %s: %.3g .. %.3g\n", name.c_str(), lo, hi);
  }

  bool bad = false;
  const std::string started = utc_now();
  nlohmann::json devices = nlohmann::json::array(), groups = nlohmann::json::array();
  std::vector<nlohmann::json> cases;
  Tally total;
  for (auto& s : slots) {
    const std::string group = cat(c.op, "/", s.name, "/", dtype_name(c.dtype));
    if (!s.backend) {
      std::printf("\n[%s] UNAVAILABLE: %s\n", s.name.c_str(), s.unavailable.c_str());
      bad |= s.requested;
      devices.push_back(device_json(s.name, nullptr, s.unavailable));
      groups.push_back({{"name", group}, {"op", c.op}, {"backend", s.name}, {"dtype", dtype_name(c.dtype)},
                        {"available", false}, {"tally", tally_json(Tally{})}});
      continue;
    }
    CaseResult r = judge(e, *s.backend);
    const DeviceInfo info = s.backend->info();
    devices.push_back(device_json(s.name, &info, ""));
    Tally t;
    t.add(r.outcome, Mark::none, r.worst, r.seconds);
    total.add(t);
    groups.push_back({{"name", group}, {"op", c.op}, {"backend", s.name}, {"dtype", dtype_name(c.dtype)},
                      {"available", true}, {"tally", tally_json(t)}});
    cases.push_back(case_json(r, CaseNote{group, 0, Mark::none, nullptr, true, input_elements(e), o.backends.kernels.dir}));
    std::printf("\n[%s] %s on %s (%.3f s)\n", s.name.c_str(), std::string(outcome_name(r.outcome)).c_str(),
                s.backend->info().name.c_str(), r.seconds);
    if (!r.detail.empty()) std::printf("  %s\n", r.detail.c_str());
    if (!r.kernels.empty() && r.outcome == Outcome::pass) std::printf("  ran %s\n", r.kernels.c_str());
    for (auto& [name, g] : r.guards)
      if (g.bad_bytes) std::printf("  %s: %lld guard bytes overwritten, first at byte %lld\n", name.c_str(),
                                   (long long)g.bad_bytes, (long long)g.first_offset);
    for (auto& rep : r.reports) {
      std::printf("  %-10s %lld elements, %lld mismatches (%lld unwritten); max abs %.3g, max rel %.3g, NMSE %.3g, "
                  "max ULP %llu, worst err/tol %.3g\n",
                  rep.output.c_str(), (long long)rep.count, (long long)rep.mismatches, (long long)rep.unwritten,
                  rep.max_abs, rep.max_rel, rep.nmse, (unsigned long long)rep.max_ulp, rep.worst);
      std::printf("      output fnv1a64=%016llx\n", (unsigned long long)r.digests[rep.output]);
      if (!rep.ok()) print_concentration(rep);
    }
    bad |= is_failure(r.outcome);
  }
  if (!o.json.empty()) {
    nlohmann::json totals = tally_json(total);
    totals["case_runs"] = total.cases;
    totals["gate"] = bad ? "fail" : "pass";
    JsonReport report(o.json);
    for (auto& one : cases) report.add(one);
    report.finish({{"schema", kReportSchema}, {"state", "complete"}, {"tool", {{"command", "repro"}, {"case", c.id()}}},
                   {"started", started}, {"seconds", total.seconds}, {"shard", {{"index", 0}, {"count", 1}}},
                   {"xfail", nullptr}, {"devices", devices}, {"kernels", kernels_json(o.backends.kernels)}, {"groups", groups}, {"coverage", nlohmann::json::object()},
                   {"totals", totals}});
  }
  return bad ? 1 : 0;
}

Command add_repro_command(CLI::App& app) {
  struct Args {
    std::string id, json;
    BackendArgs backends;
  };
  auto a = std::make_shared<Args>();
  CLI::App* repro = app.add_subcommand(
      "repro", wrap("rerun one case: outcome, input/output digests, first mismatches, error statistics and where "
                    "the errors concentrate"));
  repro->add_option("CASE_ID", a->id, "the case, e.g. " + example_case_id())->required()->type_name("");
  single_option(repro, "--json", a->json, "FILE", "write the case on every backend as a JSON report (touchstone-report/1)");
  add_backend_options(repro, a->backends);
  return {repro, [repro, a] {
            if (!a->json.empty()) check_output_path(a->json);
            ReproOptions o{a->id, a->json, backend_options(a->backends, repro)};
            require_distinct({{"--json", o.json}}, o.backends.kernels);
            return cmd_repro(o);
          }};
}

}  // namespace ts
