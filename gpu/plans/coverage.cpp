#include "gpu/plans/coverage.h"

#include <algorithm>
#include <set>

namespace ts {
namespace {

const char* const kRagged = "ragged last texel";
const char* const kMixed = "mixed layouts";

// The size of a texture's packed dimension.
int64_t packed_size(const Physical& p) {
  switch (p.layout) {
    case Layout::texture3d_w: return p.dims.w;
    case Layout::texture3d_h: return p.dims.h;
    case Layout::texture3d_c: return p.dims.c;
    default: return 0;
  }
}

// Storage classes of a valid case: each layout its tensors take, whether they take more than one,
// and for textures the packed-dimension sizes that break packing (1, 2, 3 and 5: padding lanes in
// the only texel, or a full texel and a ragged one) and a ragged last texel of any size.
void storage_classes(const Expected& e, std::vector<std::string>& out) {
  std::map<std::string, std::pair<Shape, DType>> tensors;
  for (auto& [name, t] : e.problem.inputs) tensors[name] = {t.shape, t.dtype};
  for (auto& b : e.op->buffers(e.problem))
    if (b.role == BufferSpec::Role::output) tensors[b.name] = {b.shape, b.dtype};
  std::set<std::string> layouts, packed;
  for (auto& [name, sd] : tensors) {
    const Layout l = e.problem.layout(name);
    layouts.insert(layout_name(l));
    if (!is_texture(l)) continue;
    const int64_t n = packed_size(physical(sd.first, sd.second, l));
    if (n % 4 != 0) packed.insert(kRagged);
    if (n == 1 || n == 2 || n == 3 || n == 5) packed.insert(cat("packed dim=", n));
  }
  for (auto& l : layouts) out.push_back("layout " + l);
  if (layouts.size() > 1) out.push_back(kMixed);
  out.insert(out.end(), packed.begin(), packed.end());
}

// The grid of dispatch d folds: past the 65,535 workgroups a row every device allows, or past
// kFoldedGridWidth in a problem that folds on purpose (core/op.h).
bool folds(const Dispatch& d, bool fold_grids) {
  const uint64_t wg = d.workgroup ? d.workgroup : kDefaultWorkgroup, groups = (d.invocations + wg - 1) / wg;
  return groups > kMaxGridDim || (fold_grids && groups > kFoldedGridWidth);
}

std::string folded_class(const std::string& kernel) { return "folded grid: " + kernel; }

// A tiled dispatch's last tile, ragged in rows, in columns or in both (Dispatch::tile_rows).
void tile_classes(const Dispatch& d, std::set<std::string>& out) {
  if (d.tile_rows <= 0 || d.tile_cols <= 0) return;
  const bool r = d.rows % d.tile_rows != 0, c = d.cols % d.tile_cols != 0;
  if (r) out.insert("ragged last tile, rows: " + d.kernel);
  if (c) out.insert("ragged last tile, columns: " + d.kernel);
  if (r && c) out.insert("ragged last tile, both: " + d.kernel);
}

}  // namespace

bool is_storage_class(const std::string& cls) {
  return cls.rfind("layout ", 0) == 0 || cls.rfind("packed dim=", 0) == 0 || cls == kMixed || cls == kRagged;
}

std::vector<std::string> case_classes(const Expected& e, bool of_plans) {
  std::vector<std::string> out;
  const Case& c = e.c;
  if (e.violation) {
    out.push_back("reject:" + e.violation->rule);
    return out;
  }
  if (!e.error.empty()) return out;
  out.push_back("valid");
  auto has = [&](const char* k) { return c.has(k); };
  if (has("S")) out.push_back(c.get("S") == 1 ? "decode (S=1)" : "prefill (S>1)");
  if (has("Hq") && has("Hkv")) {
    int64_t hq = c.get("Hq"), hkv = c.get("Hkv");
    if (hkv == 1 && hq > 1) out.push_back("mqa (Hkv=1)");
    else if (hkv > 0 && hq % hkv == 0) out.push_back(cat("gqa ", hq / hkv, ":1"));
  }
  for (const char* k : {"D", "C"})
    if (has(k)) {
      int64_t d = c.get(k);
      if (d == 2) out.push_back(cat(k, "=2"));
      if (d % 4 == 2) out.push_back(cat("ragged (", k, "%4==2)"));
      if (d % 2 == 1) out.push_back(cat("odd ", k));
    }
  if (c.get("pos", 0) >= 1000) out.push_back("position >= 1000");
  if (c.word("tables", "rope") == "random") out.push_back("tables=random");
  // Past 2^24 elements a float32-held index stops being exact (and the grid folds).
  int64_t largest = 0;
  for (auto& [name, t] : e.problem.inputs) largest = std::max(largest, t.numel());
  if (of_plans)
    for (auto& b : e.op->buffers(e.problem)) largest = std::max(largest, numel(b.shape));
  if (largest > (int64_t(1) << 24)) out.push_back("large (>2^24 elements)");
  if (has("mode")) out.push_back("mode=" + c.word("mode", ""));
  if (has("sections")) out.push_back("sections (3-D RoPE)");
  if (has("fshape")) out.push_back("freqs_cis " + c.word("fshape", ""));
  if (e.op->classes)
    for (auto& cls : e.op->classes(e)) out.push_back(cls);
  storage_classes(e, out);
  if (!of_plans) return out;
  const std::vector<Dispatch> plan = e.op->plan(e.problem);  // one plan() per case
  std::set<std::string> of_plan;  // a kernel can run twice in a plan: each class once
  for (const Dispatch& d : plan) {
    if (folds(d, e.problem.fold_grids)) of_plan.insert(folded_class(d.kernel));
    tile_classes(d, of_plan);
  }
  out.insert(out.end(), of_plan.begin(), of_plan.end());
  if (e.op->plan_classes)
    for (auto& cls : e.op->plan_classes(e, plan)) out.push_back(cls);
  return out;
}

std::vector<std::string> expected_classes(const OpDef& op) {
  std::vector<std::string> out = {"large (>2^24 elements)"};
  if (std::any_of(op.vars.begin(), op.vars.end(), [](const Var& v) { return v.name == "tables"; }))
    out.push_back("tables=random");
  for (auto& r : op.rules)
    if (r.id != "input_rank") out.push_back("reject:" + r.id);  // case vars cannot change a rank
  // Every layout some tensor declares (a tensor not listed is a buffer), mixed layouts when there
  // is a choice, and the packed-dimension classes when there is a texture.
  std::set<std::string> layouts;
  for (const auto* names : {&op.inputs, &op.outputs})
    for (auto& t : *names) {
      auto it = op.layouts.find(t);
      if (it == op.layouts.end()) layouts.insert("buffer");
      else layouts.insert(it->second.begin(), it->second.end());
    }
  for (auto& l : layouts) out.push_back("layout " + l);
  if (layouts.size() > 1) out.push_back(kMixed);
  if (std::any_of(layouts.begin(), layouts.end(), [](auto& l) { return is_texture(layout_from_name(l)); }))
    for (const char* cls : {kRagged, "packed dim=1", "packed dim=2", "packed dim=3", "packed dim=5"}) out.push_back(cls);
  if (op.expected_classes)
    for (auto& cls : op.expected_classes(op)) out.push_back(cls);
  if (op.expected_plan_classes)
    for (auto& cls : op.expected_plan_classes(op)) out.push_back(cls);
  // A folded grid for every kernel the operator's plans use, and a last tile ragged in both
  // dimensions for every tiled one: the kernels of its valid edge cases (which take every impl).
  std::set<std::string> kernels;
  for (DType t : op.dtypes)
    for (const Case& c : op.edge_cases(t)) {
      const Problem p = op.make(c);
      if (!op.validate(p))
        for (const Dispatch& d : op.plan(p)) {
          kernels.insert(folded_class(d.kernel));
          if (d.tile_rows > 0) kernels.insert("ragged last tile, both: " + d.kernel);
        }
    }
  out.insert(out.end(), kernels.begin(), kernels.end());
  return out;
}

}  // namespace ts
