// rope_llama's plan: xq_out's texels, then xk_out's, one or two an invocation.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"

namespace ts {
namespace {

std::vector<BufferSpec> buffers(const Problem& p) {
  return {{"xq_out", p.inputs.at("xq").shape, p.dtype}, {"xk_out", p.inputs.at("xk").shape, p.dtype}};
}

double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"xq", "xk"}); }

// One invocation per tpi output texels: xq_out's tq texels (nq invocations), then xk_out's tk. With
// D % 8 == 0 two texels (tpi = 2) share one row's index arithmetic, which on a fast GPU costs more
// than moving 16 bytes; other head dims take one texel each.
std::vector<Dispatch> plan(const Problem& p) {
  const Shape &q = p.inputs.at("xq").shape, &k = p.inputs.at("xk").shape;
  uint64_t hd = uint64_t(q[3] / 2), tpi = q[3] % 8 == 0 ? 2 : 1;
  uint64_t tq = out_texels(p, "xq_out", q), tk = out_texels(p, "xk_out", k);
  uint64_t nq = (tq + tpi - 1) / tpi, n = nq + (tk + tpi - 1) / tpi;
  return {{"rope_llama", {}, n,
           {{"n", double(n)}, {"nq", double(nq)}, {"tq", double(tq)}, {"tk", double(tk)}, {"tpi", double(tpi)},
            {"S", double(q[1])}, {"Hq", double(q[2])}, {"Hkv", double(k[2])}, {"hd", double(hd)}}}};
}

// Each output element is one float32 expression of two products of inputs exact in float32 (float16
// widens exactly): a*c - b*n or a*n + b*c. Each product term is rounded at most twice (its product,
// the sum), once if the compiler contracts it into an fma, so |err| <= gamma_2 (|a c| + |b n|).
Tensor rotation_bound(const Tensor& x, const Tensor& c, const Tensor& n) {
  const int64_t S = x.shape[1], H = x.shape[2], D = x.shape[3], half = D / 2;
  const double g = gamma_f32(2);
  Tensor out(DType::f64, x.shape);
  double* o = reinterpret_cast<double*>(out.bytes.data());
  for (int64_t r = 0; r < x.numel() / D; ++r) {
    int64_t s = (r / H) % S;
    for (int64_t i = 0; i < half; ++i) {
      double a = std::fabs(x.get(r * D + 2 * i)), b = std::fabs(x.get(r * D + 2 * i + 1));
      double ca = std::fabs(c.get(s * half + i)), na = std::fabs(n.get(s * half + i));
      o[r * D + 2 * i] = g * (a * ca + b * na);
      o[r * D + 2 * i + 1] = g * (a * na + b * ca);
    }
  }
  return out;
}

Tolerance tolerance(const Problem& p) {
  const Tensor &c = p.inputs.at("freqs_cos"), &n = p.inputs.at("freqs_sin");
  return derived_tolerance(p.dtype, {{"xq_out", rotation_bound(p.inputs.at("xq"), c, n)},
                                     {"xk_out", rotation_bound(p.inputs.at("xk"), c, n)}});
}

// Each output pair (a c - b n, a n + b c) in float32 (gpu/vulkan/shaders/rope_llama.comp).
std::vector<float> rotate_pairs(const std::vector<float>& x, const Shape& shape, const std::vector<float>& fc,
                                const std::vector<float>& fs) {
  const int64_t S = shape[1], H = shape[2], D = shape[3], half = D / 2;
  std::vector<float> o(x.size());
  for (int64_t r = 0; r < numel(shape) / D; ++r) {
    const int64_t s = (r / H) % S;
    for (int64_t i = 0; i < half; ++i) {
      float a = x[size_t(r * D + 2 * i)], b = x[size_t(r * D + 2 * i + 1)], c = fc[size_t(s * half + i)],
            n = fs[size_t(s * half + i)];
      o[size_t(r * D + 2 * i)] = a * c - b * n;
      o[size_t(r * D + 2 * i + 1)] = a * n + b * c;
    }
  }
  return o;
}

Floats emulate(const Problem& p, const Floats& in, bool) {
  return {{"xq_out", rotate_pairs(in.at("xq"), p.inputs.at("xq").shape, in.at("freqs_cos"), in.at("freqs_sin"))},
          {"xk_out", rotate_pairs(in.at("xk"), p.inputs.at("xk").shape, in.at("freqs_cos"), in.at("freqs_sin"))}};
}

// Flux's RoPE shape (24 heads of 128 over a 28,800-token sequence) at two precisions.
const std::vector<BenchWorkload> kBench = {
    {"rope_llama f16 B1 S28800 H24 D128", "rope_llama/B=1,S=28800,Hq=24,Hkv=24,D=128/float16/buffer/seed=8",
     "rope_llama/B=1,S=288,Hq=24,Hkv=24,D=128/float16/buffer/seed=8"},
    {"rope_llama f32 B1 S28800 H24 D128", "rope_llama/B=1,S=28800,Hq=24,Hkv=24,D=128/float32/buffer/seed=8",
     "rope_llama/B=1,S=288,Hq=24,Hkv=24,D=128/float32/buffer/seed=8"},
};

}  // namespace

OpContract rope_llama_contract();

const OpDef& rope_llama_op() {
  static const OpDef op{rope_llama_contract(), {buffers, plan, tolerance, emulate, bytes_moved, nullptr, kBench}};
  return op;
}

}  // namespace ts
