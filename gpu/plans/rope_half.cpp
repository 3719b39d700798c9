// rope_half's plan: one invocation per output texel.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"

namespace ts {
namespace {

std::vector<BufferSpec> buffers(const Problem& p) { return {{"out", p.inputs.at("x").shape, p.dtype}}; }

double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"x"}); }

std::vector<Dispatch> plan(const Problem& p) {
  const Shape& x = p.inputs.at("x").shape;
  uint64_t n = out_texels(p, "out", x);  // one invocation per output texel
  return {{"rope_half", {}, n, {{"n", double(n)}, {"S", double(x[2])}, {"D", double(x[3])}}}};
}

// Each output element is x[d]*cos + r[d]*sin in float32, r[d] = -x[d + D/2] or x[d - D/2] (negation
// is exact), from inputs exact in float32: each product term is rounded at most twice (once under
// fma contraction), so |err| <= gamma_2 (|x[d] cos| + |r[d] sin|).
Tolerance tolerance(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &cs = p.inputs.at("cos"), &sn = p.inputs.at("sin");
  const int64_t S = x.shape[2], D = x.shape[3], half = D / 2;
  const double g = gamma_f32(2);
  Tensor bound(DType::f64, x.shape);
  double* o = reinterpret_cast<double*>(bound.bytes.data());
  for (int64_t r = 0; r < x.numel() / std::max<int64_t>(D, 1); ++r) {
    int64_t s = r % S;
    for (int64_t d = 0; d < D; ++d) {
      double rot = std::fabs(x.get(r * D + (d < half ? d + half : d - half)));
      o[r * D + d] = g * (std::fabs(x.get(r * D + d) * cs.get(s * D + d)) + rot * std::fabs(sn.get(s * D + d)));
    }
  }
  return derived_tolerance(p.dtype, {{"out", std::move(bound)}});
}

// out = x*cos + r*sin in float32, r the rotated half (gpu/vulkan/shaders/rope_half.comp).
Floats emulate(const Problem& p, const Floats& in, bool) {
  const std::vector<float> &x = in.at("x"), &cs = in.at("cos"), &sn = in.at("sin");
  const int64_t S = p.inputs.at("x").shape[2], D = p.inputs.at("x").shape[3], hd = D / 2;
  std::vector<float> o(x.size());
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    const int64_t d = i % D, s = (i / D) % S;
    const float r = d < hd ? -x[size_t(i + hd)] : x[size_t(i - hd)];
    o[size_t(i)] = x[size_t(i)] * cs[size_t(s * D + d)] + r * sn[size_t(s * D + d)];
  }
  return {{"out", o}};
}

}  // namespace

OpContract rope_half_contract();

const OpDef& rope_half_op() {
  static const OpDef op{rope_half_contract(), {buffers, plan, tolerance, emulate, bytes_moved}};
  return op;
}

}  // namespace ts
