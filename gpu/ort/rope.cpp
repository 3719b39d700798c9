// rope_llama and rope_half as ORT's contrib RotaryEmbedding computes them: inputs (input,
// position_ids int64, cos_cache, sin_cache), the caches [max_pos, rotary_dim / 2] indexed by position.
//  - rope_llama: interleaved = 1 on xq and xk seen as [B, S, H*D] with num_heads = H (the same bytes);
//    freqs_cos/freqs_sin are the caches as they are, and position_ids [1] = {0} (ORT: position
//    0 + s for row s). Any tables, conventional or arbitrary, are expressible.
//  - rope_half: interleaved = 0 on x [B, H, S, D] (ORT reads a 4-D input as [B, H, S, D]); its cache
//    holds one angle per pair (i, i + D/2), so only tables whose two halves are equal (the
//    conventional ones, and any such arbitrary ones) are expressible: the cache is their first half.
// ORT computes in the tensors' dtype (WebGPU shaders over f16 tensors compute in f16): the bound is
// the rotation with every operation rounded to the case dtype, (|x0 c| + |x1 s|) gamma(3), and the
// case dtype's store as for every kernel. That is coarser than the operator's own bound on float16
// (its kernels compute in float32): reported as a finding (worst_own), not hidden.
#include <cmath>
#include <cstring>

#include "gpu/ort/mappings.h"
#include "gpu/plans/common.h"

namespace ts::ort {
namespace {

ForeignCall rotary(int interleaved, Tensor x, Tensor cos, Tensor sin, int64_t heads) {
  ForeignCall c;
  c.op = "RotaryEmbedding";
  c.header = {{"domain", "com.microsoft"}, {"opset", 1}};
  c.attrs = {{"interleaved", {{"i", interleaved}}}};
  if (heads) c.attrs["num_heads"] = {{"i", heads}};
  const DType t = x.dtype;
  c.inputs.push_back({"input", std::move(x)});
  Tensor pos(DType::i32, {1});
  c.inputs.push_back({"position_ids", std::move(pos)});
  c.as_int64 = {"position_ids"};
  c.inputs.push_back({"cos_cache", std::move(cos)});
  c.inputs.push_back({"sin_cache", std::move(sin)});
  c.outputs = {{"output", t}};
  c.ran = interleaved ? "RotaryEmbedding (interleaved)" : "RotaryEmbedding";
  return c;
}

// Per element: (|x_j cos| + |x_partner sin|) gamma(3) of the case dtype.
Tensor bound(const Problem& p, const Tensor& x, const Tensor& cs, const Tensor& sn, int seq_axis, bool half) {
  const int64_t D = x.shape[3], W = cs.shape[1];
  const double u = unit_roundoff(p.dtype), g = 3 * u / (1 - 3 * u);
  Tensor b(DType::f64, x.shape);
  double* E = reinterpret_cast<double*>(b.bytes.data());
  const std::vector<double> v = x.values(), c = cs.values(), s = sn.values();
  int64_t stride = 1;
  for (int k = 3; k > seq_axis; --k) stride *= x.shape[k];
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t j = e % D, row = (e / stride) % x.shape[seq_axis];
    const int64_t partner = e - j + (half ? (j < D / 2 ? j + D / 2 : j - D / 2) : (j ^ 1));
    const int64_t col = row * W + (half ? j : j / 2);
    E[e] = (std::fabs(v[e] * c[col]) + std::fabs(v[partner] * s[col])) * g;
  }
  return b;
}

// The first half of each row of a rotate-half table, if its second half repeats it bit for bit.
std::optional<Tensor> first_half(const Tensor& t) {
  const int64_t S = t.shape[0], D = t.shape[1], es = int64_t(dtype_size(t.dtype));
  Tensor h(t.dtype, {S, D / 2});
  for (int64_t s = 0; s < S; ++s) {
    const uint8_t* row = t.bytes.data() + s * D * es;
    if (std::memcmp(row, row + D / 2 * es, size_t(D / 2 * es)) != 0) return std::nullopt;
    std::memcpy(h.bytes.data() + s * D / 2 * es, row, size_t(D / 2 * es));
  }
  return h;
}

}  // namespace

std::optional<std::string> no_bfloat16(const Problem& p) {
  if (p.dtype == DType::bf16) return std::string("onnxruntime-node has no bfloat16 tensors");
  return std::nullopt;
}

Tensor reshaped(Tensor t, Shape s) {
  if (numel(s) != t.numel()) throw std::runtime_error(cat(kLibrary, ": cannot view ", t.describe(), " as ", shape_str(s)));
  t.shape = std::move(s);
  return t;
}

Mapping rope_llama() {
  return {"rope_llama",
          [](const Problem& p) {
            if (auto why = buffers_only(p, {"xq", "xk", "freqs_cos", "freqs_sin", "xq_out", "xk_out"}, kLibrary)) return Expressed::no(*why);
            if (auto why = no_bfloat16(p)) return Expressed::no(*why);
            // Two nodes' worth in one call would need a two-node model: xq and xk go as one
            // tensor of Hq + Hkv heads (same B, S, D; heads are rotated alike).
            const Tensor &q = p.inputs.at("xq"), &k = p.inputs.at("xk");
            const int64_t B = q.shape[0], S = q.shape[1], Hq = q.shape[2], Hk = k.shape[2], D = q.shape[3];
            Tensor both(p.dtype, {B, S, (Hq + Hk) * D});
            const size_t rq = size_t(Hq * D) * dtype_size(p.dtype), rk = size_t(Hk * D) * dtype_size(p.dtype);
            for (int64_t r = 0; r < B * S; ++r) {
              std::memcpy(both.bytes.data() + r * (rq + rk), q.bytes.data() + r * rq, rq);
              std::memcpy(both.bytes.data() + r * (rq + rk) + rq, k.bytes.data() + r * rk, rk);
            }
            return Expressed{rotary(1, std::move(both), p.inputs.at("freqs_cos"), p.inputs.at("freqs_sin"), Hq + Hk)};
          },
          [](const Problem& p, Tensors got) {
            const Tensor &q = p.inputs.at("xq"), &k = p.inputs.at("xk");
            const Tensor& both = got.at("output");
            const int64_t rows = q.shape[0] * q.shape[1];
            const size_t rq = size_t(q.shape[2] * q.shape[3]) * dtype_size(p.dtype), rk = size_t(k.shape[2] * k.shape[3]) * dtype_size(p.dtype);
            if (both.nbytes() != size_t(rows) * (rq + rk)) throw std::runtime_error(cat(kLibrary, " returned ", both.describe()));
            Tensor oq(p.dtype, q.shape), ok(p.dtype, k.shape);
            for (int64_t r = 0; r < rows; ++r) {
              std::memcpy(oq.bytes.data() + r * rq, both.bytes.data() + r * (rq + rk), rq);
              std::memcpy(ok.bytes.data() + r * rk, both.bytes.data() + r * (rq + rk) + rq, rk);
            }
            return Tensors{{"xq_out", std::move(oq)}, {"xk_out", std::move(ok)}};
          },
          [](const Problem& p) {
            const Tensor &c = p.inputs.at("freqs_cos"), &s = p.inputs.at("freqs_sin");
            return derived_tolerance(p.dtype, {{"xq_out", bound(p, p.inputs.at("xq"), c, s, 1, false)},
                                               {"xk_out", bound(p, p.inputs.at("xk"), c, s, 1, false)}});
          }};
}

Mapping rope_half() {
  return {"rope_half",
          [](const Problem& p) {
            if (auto why = buffers_only(p, {"x", "cos", "sin", "out"}, kLibrary)) return Expressed::no(*why);
            if (auto why = no_bfloat16(p)) return Expressed::no(*why);
            auto c = first_half(p.inputs.at("cos")), s = first_half(p.inputs.at("sin"));
            if (!c || !s)
              return Expressed::no("cos/sin whose halves differ: RotaryEmbedding's cache holds one angle per pair (i, i + D/2)");
            return Expressed{rotary(0, p.inputs.at("x"), std::move(*c), std::move(*s), 0)};
          },
          [](const Problem& p, Tensors got) {
            return Tensors{{"out", reshaped(std::move(got.at("output")), p.inputs.at("x").shape)}};
          },
          [](const Problem& p) {
            return derived_tolerance(p.dtype, {{"out", bound(p, p.inputs.at("x"), p.inputs.at("cos"), p.inputs.at("sin"), 2, true)}});
          }};
}

}  // namespace ts::ort
