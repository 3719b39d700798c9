#include "tools/check_pipeline.h"

#include <algorithm>

#include "gpu/plans/coverage.h"
#include "tools/report_json.h"

namespace ts {
namespace {

// The capability path a case of dtype t took on a device with `caps` (Problem::fallback_paths), or
// nullptr where the dtype has no choice of paths.
const char* capability_path(const std::vector<std::string>& caps, DType t, bool fallback) {
  auto has = [&](const char* word) { return std::find(caps.begin(), caps.end(), word) != caps.end(); };
  if (t == DType::i8) return has("int8-dot-product") && !fallback ? "int8 dot product" : "int8 scalar";
  if (t == DType::f16) return has("f16-rte") && !fallback ? "float16 stores by f16-rte" : "float16 stores rounded in integers";
  return nullptr;
}

}  // namespace

nlohmann::json CaseVerdict::json(bool with_maps, const std::string& kernels) const {
  return case_json(r, CaseNote{group.name, int64_t(c.position), mark, listed, with_maps, c.elements, kernels});
}

const nlohmann::json& FinishedRun::head() const {
  if (!head_) head_ = run_head(o, run, slots);
  return *head_;
}

CheckPipeline::CheckPipeline(const CheckOptions& o, CheckRun& run, const std::vector<BackendSlot>& slots,
                             std::vector<std::unique_ptr<CheckReporter>> reporters)
    : o_(o), run_(run), slots_(slots), reporters_(std::move(reporters)), expectations_(run), capabilities_(slots.size()) {
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].backend) capabilities_[s] = slots[s].backend->info().capabilities;
  run_.user_kernels = KernelUse(o.backends.kernels);
}

std::span<const Group> CheckPipeline::sweep_groups() const {
  return std::span<const Group>(run_.groups).subspan(first_);
}

void CheckPipeline::sweep_started(const Sweep& sweep) {
  const OpDef& op = sweep.op();
  const std::string dtype(dtype_name(sweep.dtype()));
  for (auto& cls : expected_classes(op)) run_.coverage[op.name][cls] += 0;
  first_ = run_.groups.size();
  for (const BackendSlot& s : slots_) {
    Group g;
    g.name = cat(op.name, "/", s.name, "/", dtype);
    g.op = op.name, g.backend = s.name, g.dtype = dtype;
    g.slot = &s;
    expectations_.assign(g);
    run_.groups.push_back(std::move(g));
  }
  for (auto& r : reporters_) r->sweep_started(sweep, sweep_groups());
}

void CheckPipeline::case_reached() {
  for (auto& r : reporters_) r->case_reached();
}

bool CheckPipeline::result(size_t slot, const CaseResult& r, const CaseRun& c) {
  Group& g = run_.groups[first_ + slot];
  const auto [mark, listed] = expectations_.judge(r, g);
  const bool first_failures = is_failure(r.outcome) && g.failures_seen++ < (long long)CheckRun::kShownPerGroup;
  const CaseVerdict v{r, c, g, first_ + slot, mark, listed, is_failure(r.outcome) && (first_failures || o_.html.empty())};
  record(v, g);
  for (auto& rep : reporters_) rep->result(v);
  if (!o_.fail_fast || !v.fails_run()) return true;
  run_.state = "stopped";
  run_.stop_reason = cat("--fail-fast: stopped after the first failure (", status_name(r.outcome, mark), " ", r.id,
                         " on ", r.backend, ")");
  return false;
}

void CheckPipeline::record(const CaseVerdict& v, Group& g) {
  const CaseResult& r = v.r;
  g.tally.add(r.outcome, v.mark, r.worst, r.seconds);
  ++run_.runs;
  // A foreign backend runs a library's kernels, whose paths are not the plan's.
  const auto& own = kernel_backends();
  if (std::find(own.begin(), own.end(), r.backend) != own.end() && r.outcome != Outcome::rejected &&
      r.outcome != Outcome::unsupported)
    if (const char* path = capability_path(capabilities_[v.group_index - first_], v.c.sweep.dtype(),
                                           v.c.e.problem.fallback_paths))
      run_.paths[r.backend][path]++;
  run_.user_kernels.count(r.backend, r.kernels);
  if (!v.unexpected()) return;
  Failure f{{}, r.outcome, r.id, r.detail, v.c.elements, v.c.k, v.c.sweep.draw(v.c.k).has_value(), "", 0};
  if (f.drawn && (!g.smallest_drawn || f.smaller_than(*g.smallest_drawn))) g.smallest_drawn = f;
  if (!g.smallest || f.smaller_than(*g.smallest)) {
    f.json = v.json(true, o_.backends.kernels.dir);
    g.smallest = std::move(f);
  }
}

void CheckPipeline::case_finished(const CaseRun& c) {
  const std::string& op = c.sweep.op().name;
  for (auto& cls : c.classes) run_.coverage[op][cls]++;
  run_.coverage[op][cat("dtype ", dtype_name(c.sweep.dtype()))]++;
  for (auto& r : reporters_) r->case_finished(c);
}

void CheckPipeline::sweep_finished() {
  for (auto& r : reporters_) r->sweep_finished(sweep_groups());
}

void CheckPipeline::cases_ended() {
  for (auto& r : reporters_) r->cases_ended();
}

void CheckPipeline::finish(const FinishedRun& end) {
  expectations_.settle(o_);
  for (auto& r : reporters_) r->run_finished(end);
}

}  // namespace ts
