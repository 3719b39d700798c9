// rope_cis's plan: one invocation per output texel.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"

namespace ts {
namespace {

std::vector<BufferSpec> buffers(const Problem& p) { return {{"out", p.inputs.at("x").shape, p.dtype}}; }

double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"x"}); }

std::vector<Dispatch> plan(const Problem& p) {
  const Shape& x = p.inputs.at("x").shape;
  uint64_t n = out_texels(p, "out", x);  // one invocation per output texel
  return {{"rope_cis", {}, n, {{"n", double(n)}, {"nc2", double(x[1] * x[2] / 2)}}}};
}

// As rope_llama: each output element is a*c - b*s or a*s + b*c in float32 from exact inputs, each
// product term rounded at most twice (once under fma contraction): |err| <= gamma_2 (|a c| + |b s|).
Tolerance tolerance(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &f = p.inputs.at("freqs_cis");
  const int64_t NC = x.shape[1] * x.shape[2];
  const double g = gamma_f32(2);
  Tensor bound(DType::f64, x.shape);
  double* o = reinterpret_cast<double*>(bound.bytes.data());
  for (int64_t pair = 0; pair < x.numel() / 2; ++pair) {
    int64_t j = pair % (NC / 2);
    double a = std::fabs(x.get(2 * pair)), b = std::fabs(x.get(2 * pair + 1));
    double c = std::fabs(f.get(2 * j)), s = std::fabs(f.get(2 * j + 1));
    o[2 * pair] = g * (a * c + b * s);
    o[2 * pair + 1] = g * (a * s + b * c);
  }
  return derived_tolerance(p.dtype, {{"out", std::move(bound)}});
}

// out pairs (a c - b s, a s + b c) in float32 (gpu/vulkan/shaders/rope_cis.comp).
Floats emulate(const Problem& p, const Floats& in, bool) {
  const std::vector<float> &x = in.at("x"), &f = in.at("freqs_cis");
  const int64_t nc2 = p.inputs.at("x").shape[1] * p.inputs.at("x").shape[2] / 2;
  std::vector<float> o(x.size());
  for (int64_t pr = 0; pr < int64_t(x.size()) / 2; ++pr) {
    const int64_t j = pr % nc2;
    float a = x[size_t(2 * pr)], b = x[size_t(2 * pr + 1)], c = f[size_t(2 * j)], s = f[size_t(2 * j + 1)];
    o[size_t(2 * pr)] = a * c - b * s;
    o[size_t(2 * pr + 1)] = a * s + b * c;
  }
  return {{"out", o}};
}

}  // namespace

OpContract rope_cis_contract();

const OpDef& rope_cis_op() {
  static const OpDef op{rope_cis_contract(), {buffers, plan, tolerance, emulate, bytes_moved}};
  return op;
}

}  // namespace ts
