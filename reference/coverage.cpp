#include "reference/coverage.h"

#include <algorithm>
#include <set>
#include "reference/q8ta_common.h"

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

// q8ta_conv2d's shape classes, from the case's vars (defaults as make() takes them).
const char* const kConvClasses[] = {"depthwise (groups = C_in)", "grouped (1 < groups < C_in)", "strided (stride > 1)",
                                    "dilated (dilation > 1)", "padded with non-zero zero point", "1x1 output",
                                    "ragged channel block (C % 4 != 0)", "impl=general", "impl=im2col", "impl=auto",
                                    "kernel 1x1", "kernel 3x3", "kernel 5x5", "kernel 1x7", "kernel 7x1", "batch > 1"};

void conv2d_classes(const Case& c, std::vector<std::string>& out) {
  const int64_t Ci = c.get("C_in"), Co = c.get("C_out"), g = c.get("groups", 1), KH = c.get("KH"), KW = c.get("KW");
  const int64_t sh = c.get("sh", 1), sw = c.get("sw", 1), ph = c.get("ph", 0), pw = c.get("pw", 0);
  const int64_t dh = c.get("dh", 1), dw = c.get("dw", 1), H = c.get("H"), W = c.get("W");
  if (g > 1 && g == Ci) out.push_back(kConvClasses[0]);
  if (g > 1 && g < Ci) out.push_back(kConvClasses[1]);
  if (sh > 1 || sw > 1) out.push_back(kConvClasses[2]);
  if (dh > 1 || dw > 1) out.push_back(kConvClasses[3]);
  if ((ph > 0 || pw > 0) && c.get("x_zp", 0) != 0) out.push_back(kConvClasses[4]);
  if ((H + 2 * ph - dh * (KH - 1) - 1) / sh == 0 && (W + 2 * pw - dw * (KW - 1) - 1) / sw == 0) out.push_back(kConvClasses[5]);
  if (Ci % 4 != 0 || Co % 4 != 0) out.push_back(kConvClasses[6]);
  const std::string impl = c.word("impl", "auto");
  const bool im2col = impl == "im2col" || (impl == "auto" && g == 1 && Ci % 4 == 0);
  out.push_back(im2col ? kConvClasses[8] : kConvClasses[7]);
  if (impl == "auto") out.push_back(kConvClasses[9]);
  const std::string k = cat("kernel ", KH, "x", KW);
  if (std::find(std::begin(kConvClasses), std::end(kConvClasses), k) != std::end(kConvClasses)) out.push_back(k);
  if (c.get("N", 1) > 1) out.push_back(kConvClasses[15]);
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

std::vector<std::string> case_classes(const Expected& e) {
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
  for (auto& b : e.op->buffers(e.problem)) largest = std::max(largest, numel(b.shape));
  if (largest > (int64_t(1) << 24)) out.push_back("large (>2^24 elements)");
  if (has("mode")) out.push_back("mode=" + c.word("mode", ""));
  if (has("sections")) out.push_back("sections (3-D RoPE)");
  if (has("fshape")) out.push_back("freqs_cis " + c.word("fshape", ""));
  const std::vector<Dispatch> plan = e.op->plan(e.problem);
  if (c.op == "sdpa") {
    const int64_t S = c.get("S"), pos = c.get("pos", 0);
    out.push_back("impl=" + c.word("impl", "tiled"));
    if ((pos + S) % 4 != 0) out.push_back("ctx%4!=0");  // a ragged context tile
    if (S > 1 && pos > 0) out.push_back("chunked prefill (S>1, pos>0)");
    if (has("logit_scale")) out.push_back("large logits");
    for (const Dispatch& d : plan) {
      auto chunk = d.uniforms.find("chunk");
      if (d.kernel.find("partial") == std::string::npos || chunk == d.uniforms.end() || S == 1) continue;
      out.push_back(d.kernel + ": S>1, keys masked");
      // Query 0 sees keys 0..pos: a later chunk holds none of its keys.
      if ((pos + S - 1) / int64_t(chunk->second) > pos / int64_t(chunk->second)) out.push_back(d.kernel + ": a chunk wholly masked");
    }
  }
  storage_classes(e, out);
  std::set<std::string> of_plan;  // a kernel can run twice in a plan: each class once
  for (const Dispatch& d : plan) {
    if (folds(d, e.problem.fold_grids)) of_plan.insert(folded_class(d.kernel));
    tile_classes(d, of_plan);
  }
  out.insert(out.end(), of_plan.begin(), of_plan.end());
  if (c.op == "q8ta_conv2d") conv2d_classes(c, out);
  if (c.op.rfind("q8ta_", 0) == 0)
    for (auto& cls : q8ta::classes(e)) out.push_back(cls);
  return out;
}

std::vector<std::string> expected_classes(const OpDef& op) {
  std::vector<std::string> out = {"large (>2^24 elements)"};
  if (op.name.rfind("rope_", 0) == 0 && op.name != "rope_matrix") out.push_back("tables=random");
  for (auto& r : op.rules)
    if (r.id != "input_rank") out.push_back("reject:" + r.id);  // case vars cannot change a rank
  if (op.name == "sdpa")
    for (const char* cls : {"impl=naive", "impl=tiled", "ctx%4!=0", "chunked prefill (S>1, pos>0)", "large logits",
                            "sdpa_split_partial: S>1, keys masked", "sdpa_split_partial: a chunk wholly masked",
                            "sdpa_decode_partial: S>1, keys masked"})
      out.push_back(cls);
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
  if (op.name == "q8ta_conv2d") out.insert(out.end(), std::begin(kConvClasses), std::end(kConvClasses));
  if (op.name.rfind("q8ta_", 0) == 0)
    for (auto& cls : q8ta::expected_classes(op)) out.push_back(cls);
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
