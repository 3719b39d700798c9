// sdpa as ORT's contrib GroupQueryAttention computes it (no rotary): query [1, S, Hq*D], key and value
// [1, S, Hkv*D], past_key / past_value [1, Hkv, L, D] (the operator's [1, Cmax, Hkv, D] caches
// transposed, L = Cmax), seqlens_k = input_pos + S - 1 and total_sequence_length = input_pos + S
// (int32). ORT takes the past length from seqlens_k (input_pos), appends k and v, and lets query row
// s see keys c <= input_pos + s, with query head h on kv head h / (Hq / Hkv): the operator's rules.
// What differs:
//  - present_key / present_value hold the cache's first ctx = input_pos + S rows exactly; the rows
//    past ctx are not ORT's to keep (its copy kernel leaves them unspecified). The mapping returns
//    the operator's caches as ORT's first ctx rows over the input's rows past ctx: those rows are
//    the mapping's copy, not ORT's output, and prove nothing about it.
//  - head_dim must be a multiple of 8 (ORT's rule): other cases are UNSUPPORTED.
//  - ORT computes in the tensors' dtype: the bound is the operator's own derivation with every
//    operation rounded to the case dtype (sdpa_error_bound with u = 2^-11 for float16).
#include <cmath>
#include <cstring>

#include "gpu/ort/mappings.h"
#include "gpu/plans/common.h"
#include "gpu/plans/sdpa.h"

namespace ts::ort {
namespace {

int64_t input_pos(const Problem& p) { return p.params.at("input_pos").get<int64_t>(); }

// [1, A, B, D] -> [1, B, A, D] (the cache's rows and heads swapped), bytes moved as they are.
Tensor swap12(const Tensor& t) {
  const int64_t A = t.shape[1], B = t.shape[2], D = t.shape[3];
  const size_t row = size_t(D) * dtype_size(t.dtype);
  Tensor r(t.dtype, {1, B, A, D});
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) std::memcpy(r.bytes.data() + (b * A + a) * row, t.bytes.data() + (a * B + b) * row, row);
  return r;
}

Expressed express(const Problem& p) {
  if (auto why = buffers_only(p, {"q", "k", "v", "k_cache", "v_cache", "out"}, kLibrary)) return Expressed::no(*why);
  if (auto why = no_bfloat16(p)) return Expressed::no(*why);
  const Tensor &q = p.inputs.at("q"), &k = p.inputs.at("k");
  const int64_t S = q.shape[1], Hq = q.shape[2], D = q.shape[3], Hkv = k.shape[2], pos = input_pos(p);
  if (D % 8) return Expressed::no(cat("head_dim ", D, " is not a multiple of 8 (GroupQueryAttention's head_size rule)"));
  if (pos + S > INT32_MAX) return Expressed::no("a context past int32 (seqlens_k)");
  ForeignCall c;
  c.op = "GroupQueryAttention";
  c.header = {{"domain", "com.microsoft"}, {"opset", 1}};
  const double scale = p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(double(D));
  c.attrs = {{"num_heads", {{"i", Hq}}}, {"kv_num_heads", {{"i", Hkv}}}, {"scale", {{"f", scale}}}};
  c.inputs.push_back({"query", reshaped(q, {1, S, Hq * D})});
  c.inputs.push_back({"key", reshaped(k, {1, S, Hkv * D})});
  c.inputs.push_back({"value", reshaped(p.inputs.at("v"), {1, S, Hkv * D})});
  c.inputs.push_back({"past_key", swap12(p.inputs.at("k_cache"))});
  c.inputs.push_back({"past_value", swap12(p.inputs.at("v_cache"))});
  Tensor seqlens(DType::i32, {1}), total(DType::i32, {});
  seqlens.set(0, double(pos + S - 1));
  total.set(0, double(pos + S));
  c.inputs.push_back({"seqlens_k", std::move(seqlens)});
  c.inputs.push_back({"total_sequence_length", std::move(total)});
  c.outputs = {{"output", p.dtype}, {"present_key", p.dtype}, {"present_value", p.dtype}};
  c.ran = "GroupQueryAttention";
  return Expressed{std::move(c)};
}

// The operator's cache: ORT's first ctx rows (present is [1, Hkv, rows, D]) over the input's.
Tensor cache(const Problem& p, const std::string& name, const Tensor& present) {
  Tensor out = p.inputs.at(name);
  const int64_t Cmax = out.shape[1], Hkv = out.shape[2], D = out.shape[3];
  const int64_t ctx = input_pos(p) + p.inputs.at("q").shape[1];
  if (present.shape.size() != 4 || present.shape[1] != Hkv || present.shape[2] < ctx || present.shape[3] != D)
    throw std::runtime_error(cat(kLibrary, " returned ", present.describe(), " for ", name, " of ", ctx, " rows"));
  const int64_t rows = present.shape[2];
  const size_t row = size_t(D) * dtype_size(out.dtype);
  for (int64_t c = 0; c < ctx && c < Cmax; ++c)
    for (int64_t h = 0; h < Hkv; ++h) std::memcpy(out.bytes.data() + (c * Hkv + h) * row, present.bytes.data() + (h * rows + c) * row, row);
  return out;
}

Tensors outputs(const Problem& p, Tensors got) {
  Tensors out;
  out["out"] = reshaped(std::move(got.at("output")), p.inputs.at("q").shape);
  out["k_cache"] = cache(p, "k_cache", got.at("present_key"));
  out["v_cache"] = cache(p, "v_cache", got.at("present_value"));
  return out;
}

Tolerance bound(const Problem& p) {
  return derived_tolerance(p.dtype, {{"out", sdpa_error_bound(p, unit_roundoff(p.dtype))}});
}

}  // namespace

Mapping sdpa() { return {"sdpa", express, outputs, bound}; }

}  // namespace ts::ort
