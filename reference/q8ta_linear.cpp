// q8ta_linear: int8 activations x int8 per-channel weights -> int8, SPEC "q8ta_linear" and
// "q8ta_linear implementations".
//
// Layouts and implementations. x and out may be buffer, int8_4w or int8_4w4c, independently of
// impl: kernels read and write through the generated layout accessors (gpu/ACCESSORS.md), so any
// pairing computes the same function. The seed pairs impl=tiled with int8_4w4c and impl=gemv with
// int8_4w; the edge cases pin those pairings and the generator draws them two times in three, the
// rest mixes them. int8_4c1w is not offered: x [M,K] is viewed as [N=1,C=1,H=M,W=K], so every word
// would hold one element. weight, weight_scales and bias are plain buffers.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/rng.h"
#include "reference/common.h"
#include "reference/ops.h"
#include "reference/q8ta_common.h"

namespace ts {
namespace {

using namespace q8ta;

// |x - zp| <= 255 and |w| <= 128: an accumulator of K terms stays below 32640 K < 2^31 for K up to
// 65536, so an int32 accumulator (the kernels') is exact.
constexpr int64_t kMaxK = 65536;
const char* const kTiled = "buffer;out=int8_4w4c;x=int8_4w4c";
const char* const kGemv = "buffer;out=int8_4w;x=int8_4w";

Problem make(const Case& c) {
  const int64_t M = c.get("M"), K = c.get("K"), N = c.get("N");
  Problem p = accumulator_problem(c, {M, K}, {N, c.get("Kw", K)}, K, c.get("Ns", N), c.get("Nb", N));
  p.params["impl"] = c.word("impl", "auto");
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("q8ta_linear");
  if (!accumulator_inputs(c, p, 2)) return c.result();
  const bool bias = p.inputs.count("bias") > 0;
  const Shape &x = p.inputs.at("x").shape, &w = p.inputs.at("weight").shape;
  const int64_t M = x[0], K = x[1], N = w[0];
  c.require(M >= 1, "dims_positive", "M (", M, ") must be at least 1");
  c.require(N >= 1, "dims_positive", "N (", N, ") must be at least 1");
  c.require(K >= 1 && K <= kMaxK, "k_range", "K (", K, ") must be in [1, ", kMaxK, "] (an int32 accumulator is exact)");
  c.require(w[1] == K, "weight_k_match", "weight ", shape_str(w), " must be [N, K] with x's K (", K, ")");
  const Shape& s = p.inputs.at("weight_scales").shape;
  c.require(s == Shape{N}, "scales_shape", "weight_scales ", shape_str(s), " must be [N] = [", N, "]");
  if (bias) {
    const Shape& b = p.inputs.at("bias").shape;
    c.require(b == Shape{N}, "bias_shape", "bias ", shape_str(b), " must be [N] = [", N, "]");
  }
  if (c.failed()) return c.result();
  require_scale(c, p.params, "input_scale");
  require_scale(c, p.params, "output_scale");
  require_scale_values(c, p.inputs.at("weight_scales"), "weight_scales");
  require_zero_point(c, p.params, "input_zero_point");
  require_zero_point(c, p.params, "output_zero_point");
  if (bias) {
    const Tensor& b = p.inputs.at("bias");
    for (int64_t n = 0; n < N && !c.failed(); ++n)
      c.require(std::isfinite(b.get(n)) && std::fabs(b.get(n)) <= kMaxBias, "bias_range", "bias[", n, "] (",
                num(b.get(n)), ") must be finite with magnitude at most 2^32");
  }
  // Not a listed rule: no case id can break it (like inputs_present), only a golden's params.
  const Params::const_iterator impl = p.params.find("impl");
  const bool known = impl == p.params.end() ||
                     (impl->is_string() && (*impl == "auto" || *impl == "tiled" || *impl == "gemv" || *impl == "coopmat"));
  c.require(known, "params_valid", "params.impl (", impl == p.params.end() ? "" : impl->dump(),
            ") must be \"auto\", \"tiled\", \"gemv\" or \"coopmat\"");
  c.require(!(known && impl != p.params.end() && *impl == "gemv" && M > 1), "gemv_requires_m_1",
            "impl=gemv computes one row: M (", M, ") must be 1");
  return c.result();
}

}  // namespace

namespace q8ta {

Requant linear_requant(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight"), &wsc = p.inputs.at("weight_scales");
  auto bias = p.inputs.find("bias");
  const int64_t M = x.shape[0], K = x.shape[1], N = w.shape[0];
  const double is = scale_param(p.params, "input_scale"), os = scale_param(p.params, "output_scale");
  const int64_t xzp = zero_point_param(p.params, "input_zero_point");
  const int8_t* xd = reinterpret_cast<const int8_t*>(x.bytes.data());
  const int8_t* wd = reinterpret_cast<const int8_t*>(w.bytes.data());
  Requant r;
  r.zp = zero_point_param(p.params, "output_zero_point");
  r.v.resize(size_t(M * N));
  r.d.resize(size_t(M * N));
  for (int64_t n = 0; n < N; ++n) {
    const double ws = wsc.get(n), b = bias == p.inputs.end() ? 0.0 : bias->second.get(n);
    for (int64_t m = 0; m < M; ++m) {
      int64_t acc = 0;  // exact: |acc| < 2^31 (k_range)
      for (int64_t k = 0; k < K; ++k) acc += (int64_t(xd[m * K + k]) - xzp) * int64_t(wd[n * K + k]);
      const size_t i = size_t(m * N + n);  // the bound's derivation: q8ta_common.cpp
      accumulator_term(double(acc), is, ws, b, os, r.v[i], r.d[i]);
    }
  }
  return r;
}

}  // namespace q8ta

namespace {

Tensors reference(const Problem& p) {
  return int8_output("out", {p.inputs.at("x").shape[0], p.inputs.at("weight").shape[0]}, linear_requant(p));
}

std::vector<Case> edge_cases(DType t) {
  if (t != DType::i8) return {};
  auto mk = [t](int64_t M, int64_t K, int64_t N, const char* impl, const char* storage) {
    Case c{"q8ta_linear", {}, t, Storage::parse(storage).text(), uint64_t(3000 + M * 7 + K * 13 + N * 17)};
    c.set("M", M).set("K", K).set("N", N).set("impl", impl);
    return c;
  };
  auto with_seed = [](Case c, uint64_t seed) {
    c.seed = seed;
    return c;
  };
  std::vector<Case> v = {
      mk(1, 1, 1, "gemv", kGemv),                                              // the smallest GEMV
      mk(1, 7, 3, "auto", kGemv).set("x_zp", -128).set("out_zp", 127),         // ragged K, extreme zero points
      mk(5, 9, 6, "tiled", kTiled).set("bias", "no"),                          // ragged M, N, K tiles
      // Exact ties (12 and 4, both parities), odd output zero points (adding one before rounding breaks ties).
      with_seed(mk(8, 5, 4, "tiled", kTiled).set("scales", "pow2").set("range", 1).set("out_shift", 7).set("x_zp", 3).set("out_zp", -1), 1),
      with_seed(mk(1, 13, 16, "gemv", kGemv).set("scales", "pow2").set("range", 1).set("out_shift", 5).set("out_zp", 1), 1),
      mk(4, 32, 4, "tiled", kTiled).set("out_shift", -4).set("x_zp", 127),      // saturates at both ends
      mk(8, 64, 8, "auto", kTiled),                                            // whole tiles, K a multiple of 16
      mk(6, 10, 1, "auto", kTiled),                                            // N = 1
      mk(2, 6, 3, "auto", "buffer"),                                           // plain buffers
      mk(4, 8, 4, "tiled", "buffer;x=int8_4w;out=int8_4w4c"),                  // mixed layouts
      mk(1, 259, 4, "gemv", kGemv),                                            // K > 4 x 64: every thread of the split
      // coopmat (int8 tensor cores, where the device has them): ragged tiles and stages with a zero
      // point, 16-byte chunks from buffers, packed layouts through the accessors.
      mk(5, 70, 9, "coopmat", "buffer").set("x_zp", -128),
      mk(40, 272, 70, "coopmat", "buffer").set("x_zp", 5),
      mk(33, 20, 6, "coopmat", "buffer;x=int8_4w;out=int8_4w4c"),
      mk(1, 1000, 2, "auto", kGemv).set("bias", "no"),
      // Former ties just off x.5, inside the float32 bound: outputs there may differ by 1.
      mk(3, 6, 5, "tiled", kTiled).set("scales", "near").set("range", 2).set("out_shift", 6),
      mk(1, 8, 3, "gemv", kGemv).set("scales", "pow2").set("x_zp", 127).set("out_zp", -128).set("out_shift", -2),
      mk(2, 5, 3, "tiled", "buffer;x=int8_4w4c;out=buffer").set("x_zp", -128).set("out_zp", -128).set("range", 3),
  };
  // Invalid: each rule broken on its own (input_rank by a reshaped golden: ids cannot change ranks),
  // mostly in buffers: rules do not depend on the storage, and goldens hold logical tensors.
  v.push_back(mk(0, 4, 3, "tiled", "buffer"));
  v.push_back(mk(1, 0, 3, "gemv", kGemv));  // packed: rejected before any packing
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("Kw", 5));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("Ns", 4));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("Nb", 2));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("x_dtype", "int32"));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("bad_value", "output_scale_negative"));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("x_zp", 128));
  v.push_back(mk(2, 4, 3, "tiled", "buffer").set("bad_value", "bias_nan"));
  v.push_back(mk(2, 4, 3, "gemv", kGemv));
  return v;
}

// weight [65537, 256]: 16,777,472 elements. out in int8_4w4c holds one output per word (C = 1), so
// the GEMV runs 65,540 workgroups of 64 (4,194,560 invocations), past 65,535 per grid dimension;
// int8_4w would pack 4 outputs a word and stay under it.
Case large_case() {
  Case c{"q8ta_linear", {}, DType::i8, "buffer;out=int8_4w4c;x=int8_4w", 7};
  return c.set("M", 1).set("K", 256).set("N", 65537).set("impl", "gemv");
}

std::vector<Var> vars() {
  std::vector<Var> v = {
      int_var("M", 0, kMaxDim, "", "rows of x (1: GEMV)"),
      int_var("K", 0, kMaxDim, "", "reduction length"),
      int_var("N", 0, kMaxDim, "", "output channels"),
      word_var("impl", {"auto", "tiled", "gemv", "coopmat"}, "auto",
               "tiled: 4x4 output tiles; gemv: M = 1, 64 threads split K; coopmat: int8 tensor cores (cooperative "
               "matrices), 64x64 or 32x32 tiles; auto: gemv iff M = 1")};
  for (Var& a : accumulator_vars(int_var("Kw", 0, kMaxDim, "K", "weight's K"), "N")) v.push_back(std::move(a));
  return v;
}

}  // namespace

OpContract q8ta_linear_contract() {
  return {
      "q8ta_linear",
      "int8 activations x int8 per-channel weights -> int8 (tiled, and GEMV for M = 1)",
      {"x", "weight", "weight_scales", "bias"},
      {"out"},
      {{"input_rank", "x [M,K] and weight [N,K] have rank 2, weight_scales and bias rank 1"},
       {"input_dtypes", "x and weight are int8, weight_scales and bias float32"},
       {"dims_positive", "M >= 1 and N >= 1"},
       {"k_range", "1 <= K <= 65536 (the int32 accumulator is exact)"},
       {"weight_k_match", "weight is [N, K] with x's K"},
       {"scales_shape", "weight_scales is [N]"},
       {"bias_shape", "bias, when given, is [N]"},
       {"scales_valid", "input_scale, output_scale and every weight_scales[n] are numbers in [2^-32, 2^32] (kernels use them rounded to float32)"},
       {"zero_point_range", "input_zero_point and output_zero_point are integers in [-128, 127]"},
       {"bias_range", "every bias[n] is finite with magnitude at most 2^32"},
       {"gemv_requires_m_1", "impl=gemv only with M = 1"}},
      {DType::i8},
      make, validate, reference, edge_cases, gen_q8ta_linear, large_case,
      vars(),
      {{"x", {"buffer", "int8_4w", "int8_4w4c"}}, {"out", {"buffer", "int8_4w", "int8_4w4c"}}},
      q8ta::classes,
      q8ta::expected_classes};
}

}  // namespace ts
