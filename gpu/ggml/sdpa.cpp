// sdpa as llama.cpp's graph computes attention over its KV cache: ggml_set_rows writes k and v into
// the caches at rows input_pos + s, then ggml_flash_attn_ext reads the first ctx = input_pos + S rows
// of both (views with the caches' strides) under a float16 mask that is 0 where a query may look and
// -inf past its causal limit, and query head h reads kv head h / (Hq / Hkv) (ggml's broadcast:
// n_head % n_head_kv == 0), the operator's GQA rule. What differs:
//  - ggml takes q in float32 (the case's q widened, exactly) and returns out in float32, which the
//    mapping rounds to the case dtype (the bound counts that rounding, as for every kernel).
//  - The kernel (flash_attn.comp) computes in float16 where the device has it (its FLOAT_TYPE; the
//    accumulator too unless the precision is GGML_PREC_F32, which is asked for, as llama.cpp does).
//    The bound is the operator's own derivation with every operation rounded to float16
//    (u = 2^-11): sdpa_error_bound. Over long contexts that bounds nothing (gamma(n) past n u = 1):
//    such cases pass on any finite output, and the report's error against the operator's own bound
//    (worst_own) says how far float16 took them.
//  - The cache holds the case dtype; ggml-vulkan's flash attention takes float16 and quantized
//    caches: which others it refuses, its supports_op says (UNSUPPORTED with its words).
#include <cmath>

#include "gpu/ggml/mappings.h"
#include "gpu/plans/common.h"
#include "gpu/plans/sdpa.h"

namespace ts::ggml {
namespace {

int64_t input_pos(const Problem& p) { return p.params.at("input_pos").get<int64_t>(); }

Expressed express(const Problem& p) {
  if (auto why = buffers_only(p, {"q", "k", "v", "k_cache", "v_cache", "out"}, kLibrary)) return Expressed::no(*why);
  const Tensor& q = p.inputs.at("q");
  const int64_t S = q.shape[1], D = q.shape[3], pos = input_pos(p), ctx = pos + S;
  if (pos + S > INT32_MAX) return Expressed::no("a cache row past int32 (ggml_set_rows' row indices)");
  // ggml_set_rows asserts (GGML_ASSERT, an abort) on any other source type: refused here, first.
  if (p.dtype != DType::f32 && p.dtype != DType::f16) return Expressed::no("ggml_set_rows takes float32 and float16 rows only");
  ForeignCall c;
  c.op = "attention";
  const double scale = p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(double(D));
  c.attrs = {{"scale", {{"f", scale}}}, {"prec", {{"i", 10}}}};  // GGML_PREC_F32
  c.inputs.push_back({"q", q.cast(DType::f32)});
  for (const char* t : {"k", "v", "k_cache", "v_cache"}) c.inputs.push_back({t, p.inputs.at(t)});
  Tensor mask(DType::f16, {S, ctx});
  for (int64_t s = 0; s < S; ++s)
    for (int64_t k = pos + s + 1; k < ctx; ++k) mask.set(s * ctx + k, -INFINITY);
  c.inputs.push_back({"mask", std::move(mask)});
  Tensor rows(DType::i32, {S});
  for (int64_t s = 0; s < S; ++s) rows.set(s, double(pos + s));
  c.inputs.push_back({"rows", std::move(rows)});
  c.outputs = {{"out", DType::f32}, {"k_cache", p.dtype}, {"v_cache", p.dtype}};
  c.ran = "SET_ROWS + FLASH_ATTN_EXT";
  return Expressed{std::move(c)};
}

Tensors outputs(const Problem& p, Tensors got) {
  Tensors out;
  for (const char* name : {"out", "k_cache", "v_cache"}) {
    auto it = got.find(name);
    const Shape& want = p.inputs.at(name == std::string("out") ? "q" : name).shape;
    if (it == got.end() || it->second.numel() != numel(want))
      throw std::runtime_error(cat(kLibrary, " returned no ", name, " of ", numel(want), " elements"));
    Tensor t = name == std::string("out") ? it->second.cast(p.dtype) : std::move(it->second);
    t.shape = want;
    out[name] = std::move(t);
  }
  return out;
}

Tolerance bound(const Problem& p) { return derived_tolerance(p.dtype, {{"out", sdpa_error_bound(p, unit_roundoff(DType::f16))}}); }

}  // namespace

Mapping sdpa() { return {"sdpa", express, outputs, bound}; }

}  // namespace ts::ggml
