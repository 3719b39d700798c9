// q8ta_add: int8 + int8 -> int8 with independent quantization, SPEC "q8ta_add".
//
// a, b and out may each be buffer, int8_4w, int8_4c1w or int8_4w4c; rule packed_dim_compatible
// (the seed's PackedDimInfo sync rule) requires them to share the packed dimension and its block
// size: int8_4c1w and int8_4w4c (C, 4) mix freely, int8_4w (W, 4) goes only with itself, and a
// plain int8 buffer (W, 1: logical order) only with itself — the seed's buffer storage.
#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "reference/common.h"
#include "reference/ops.h"
#include "reference/q8ta_common.h"

namespace ts {
namespace {

using namespace q8ta;

Problem make(const Case& c) {
  const Shape shape = c.list("shape"), bshape = c.has("bshape") ? c.list("bshape") : shape;
  const int64_t a_zp = c.get("a_zp", 0), b_zp = c.get("b_zp", 0), out_zp = c.get("out_zp", 0);
  const int64_t range = c.get("range", 128);
  const std::string mode = c.word("scales", "random"), bad = c.word("bad_value", "none");
  const bool pow2 = mode == "pow2" || mode == "near";
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  const IntRange ar = data_range(a_zp, range), br = data_range(b_zp, range);
  p.inputs["a"] = int_tensor(dtype_of(c, "a", DType::i8), shape, c.seed, "a", ar.lo, ar.hi);
  p.inputs["b"] = int_tensor(dtype_of(c, "b", DType::i8), bshape, c.seed, "b", br.lo, br.hi);
  double as = draw_scale(pow2, -6, c.seed, "a_scale", 0), bs = draw_scale(pow2, -6, c.seed, "b_scale", 0);
  const double typical = std::hypot(as * rms_about(ar, a_zp), bs * rms_about(br, b_zp));
  double os = output_scale_for(pow2, typical, c.get("out_shift", 0), c.seed);
  if (mode == "near") os = double(float(os * (1 + 0x1p-22)));  // exactly representable: 23 mantissa bits
  if (mode == "decimal") as = decimal3(as), bs = decimal3(bs), os = decimal3(os);
  if (bad == "a_scale_zero") as = 0;
  if (bad == "b_scale_negative") bs = -bs;
  if (bad == "output_scale_huge") os = 0x1p33;
  p.params["a_scale"] = as;
  p.params["a_zero_point"] = a_zp;
  p.params["b_scale"] = bs;
  p.params["b_zero_point"] = b_zp;
  p.params["output_scale"] = os;
  p.params["output_zero_point"] = out_zp;
  return p;
}

// The seed's PackedDimInfo: which logical dimension a layout packs, and in blocks of how many.
struct PackedDim {
  char dim;
  int block;
};
PackedDim packed_dim(Layout l) {
  switch (l) {
    case Layout::buffer: return {'W', 1};
    case Layout::int8_4w: case Layout::texture3d_w: return {'W', 4};
    case Layout::texture3d_h: return {'H', 4};
    case Layout::int8_4c1w: case Layout::int8_4w4c: case Layout::texture3d_c: return {'C', 4};
  }
  return {'?', 0};
}

std::string describe(const Problem& p, const char* tensor) {
  const Layout l = p.layout(tensor);
  const PackedDim d = packed_dim(l);
  return cat(tensor, " ", layout_name(l), " (", d.dim, ", block ", d.block, ")");
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("q8ta_add");
  if (!has_inputs(c, p, {"a", "b"})) return c.result();
  for (const char* name : {"a", "b"}) {
    const Shape& s = p.inputs.at(name).shape;
    c.require(s.size() >= 1 && s.size() <= 4, "input_rank", name, " must have rank 1 to 4, got ", shape_str(s));
  }
  if (c.failed()) return c.result();
  require_dtype(c, p, "a", DType::i8);
  require_dtype(c, p, "b", DType::i8);
  const Shape &a = p.inputs.at("a").shape, &b = p.inputs.at("b").shape;
  c.require(a == b, "shapes_match", "b ", shape_str(b), " must have a's shape ", shape_str(a));
  if (c.failed()) return c.result();
  require_scale(c, p.params, "a_scale");
  require_scale(c, p.params, "b_scale");
  require_scale(c, p.params, "output_scale");
  require_zero_point(c, p.params, "a_zero_point");
  require_zero_point(c, p.params, "b_zero_point");
  require_zero_point(c, p.params, "output_zero_point");
  const PackedDim pa = packed_dim(p.layout("a")), pb = packed_dim(p.layout("b")), po = packed_dim(p.layout("out"));
  auto same = [](PackedDim x, PackedDim y) { return x.dim == y.dim && x.block == y.block; };
  c.require(same(pa, pb) && same(pa, po), "packed_dim_compatible", describe(p, "a"), ", ", describe(p, "b"), " and ",
            describe(p, "out"), " must share the packed dimension and block size");
  return c.result();
}

// The int8 comparison bound (SPEC "Comparison and outcomes"; the rule itself in q8ta_common.h).
//
// The kernel's requantization, in float32 (u = 2^-23, reference/common.h), with integer
// differences da = a - a_zp, db = b - b_zp (|da|, |db| <= 255: exact as int and as float32):
//   q = (a_scale * da + b_scale * db) * (1 / output_scale)
// in any association or contraction, the scale ratios possibly folded on the host (a_scale /
// output_scale rounded once, u/2), 1 / output_scale a host uniform (u/2) or a device reciprocal or
// division (2.5 u). Each term ta = a_scale da, tb = b_scale db passes through at most a product
// (1 u), the sum (1 u) and the scaling (reciprocal 2.5 u and product 1 u): 5.5 u, so
//   |q - v_exact| <= gamma_f32(6) (|ta| + |tb|) / os     (Higham, Lemma 3.1).
// The reference's v = (ta + tb) / os in float64 (products exact: 8 x 24 bits; two roundings of
// 2^-53) is covered by the factor 1 + 2^-20. Scales in [2^-32, 2^32] and |da|, |db| <= 255 keep
// every product in float32's normal range (at most 2^72, at least 2^-64 when nonzero); only the sum
// can cancel into a subnormal, which a device may flush: 2^-126 / os <= 2^-94, so 2^-80 more.
//
// Exact elements: with a_scale, b_scale and output_scale powers of two, every product of da (db)
// with any subset of {its scale, 1/os} is a power of two times a small integer, exact in the normal
// range; when also the exact sum ta + tb (or its scaled form) is a normal float32, every operation
// returns its exact result in any order, contraction or rounding direction. Then d = 0 and the
// output must equal the reference bit for bit, ties to even included.
bool exact(double da, double db, double as, double bs, double os) {
  const double inv = 1 / os;
  for (double prod : {da * as, da * inv, as * inv, da * as * inv, db * bs, db * inv, bs * inv, db * bs * inv})
    if (!normal_or_zero_f32(prod)) return false;
  return f32_sum_exact(da * as, db * bs) && f32_exact((da * as + db * bs) * inv);
}

}  // namespace

namespace q8ta {

Requant add_requant(const Problem& p) {
  const Tensor &a = p.inputs.at("a"), &b = p.inputs.at("b");
  const double as = scale_param(p.params, "a_scale"), bs = scale_param(p.params, "b_scale");
  const double os = scale_param(p.params, "output_scale");
  const int64_t azp = zero_point_param(p.params, "a_zero_point"), bzp = zero_point_param(p.params, "b_zero_point");
  const bool pow2 = is_pow2(as) && is_pow2(bs) && is_pow2(os);
  // Scales that are not float32 values reach the kernel rounded to float32, half an ulp each: u
  // more on each term (its scale and output_scale), gamma_f32(7) in place of gamma_f32(6).
  const double g = gamma_f32(f32_exact(as) && f32_exact(bs) && f32_exact(os) ? 6 : 7) * (1 + 0x1p-20);
  const int8_t* ad = reinterpret_cast<const int8_t*>(a.bytes.data());
  const int8_t* bd = reinterpret_cast<const int8_t*>(b.bytes.data());
  Requant r;
  r.zp = zero_point_param(p.params, "output_zero_point");
  const size_t n = size_t(a.numel());
  r.v.resize(n);
  r.d.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double da = double(int64_t(ad[i]) - azp), db = double(int64_t(bd[i]) - bzp);
    const double ta = as * da, tb = bs * db;
    r.v[i] = (ta + tb) / os;
    r.d[i] = pow2 && exact(da, db, as, bs, os) ? 0.0 : g * (std::fabs(ta) + std::fabs(tb)) / os + 0x1p-80;
  }
  return r;
}

}  // namespace q8ta

namespace {

Tensors reference(const Problem& p) { return int8_output("out", p.inputs.at("a").shape, add_requant(p)); }

std::vector<Case> edge_cases(DType t) {
  if (t != DType::i8) return {};
  auto mk = [t](const char* shape, const char* storage) {
    Case c{"q8ta_add", {}, t, Storage::parse(storage).text(), uint64_t(4000 + fnv1a64(shape) % 1000)};
    c.set("shape", shape);
    return c;
  };
  auto with_seed = [](Case c, uint64_t seed) {
    c.seed = seed;
    return c;
  };
  std::vector<Case> v = {
      mk("4", "int8_4w"),
      mk("3:5", "int8_4w"),                                        // ragged W
      mk("2:6:3", "int8_4c1w"),                                    // ragged C
      mk("1:5:2:7", "int8_4w4c"),                                  // ragged C and W
      mk("2:7:3:5", "int8_4w4c;b=int8_4c1w;out=int8_4c1w"),        // the seed's mixed example
      mk("6:2:9", "int8_4c1w;b=int8_4w4c;out=int8_4w4c"),
      mk("3:4:5", "buffer"),
      // Exact ties (5, both parities) with an odd output zero point (adding it before rounding breaks them).
      with_seed(mk("6:9", "int8_4w").set("scales", "pow2").set("a_zp", 1).set("b_zp", -3).set("out_zp", 5), 1),
      mk("3:3:8", "int8_4w4c").set("out_shift", -3).set("a_zp", -128).set("b_zp", 127),  // saturates both ways
      mk("16", "int8_4w").set("a_zp", 127).set("b_zp", -128).set("out_zp", -128),
      mk("5:3:2", "int8_4c1w").set("scales", "pow2").set("range", 2).set("out_shift", 3).set("out_zp", -1),
      mk("2:3:4:5", "int8_4c1w"),
      with_seed(mk("7:6", "int8_4w").set("scales", "near").set("range", 3).set("out_shift", 4), 1),  // just off ties: 19 of 42
      mk("1", "int8_4w"),
  };
  // Invalid: each rule broken on its own, in buffers where the rule is not about storage (goldens
  // hold logical tensors).
  v.push_back(mk("1:1:1:2:3", "buffer"));
  v.push_back(mk("3:5", "buffer").set("bshape", "3:4"));
  v.push_back(mk("3:5", "buffer").set("b_dtype", "int32"));
  v.push_back(mk("3:5", "buffer").set("bad_value", "b_scale_negative"));
  v.push_back(mk("3:5", "buffer").set("out_zp", -129));
  v.push_back(mk("2:4:5", "int8_4w4c;b=int8_4w"));
  return v;
}

// 4 x 4097 x 1024 = 16,781,312 elements; one invocation per packed word is 4,195,328, past 65,535
// workgroups of 64.
Case large_case() {
  Case c{"q8ta_add", {}, DType::i8, "int8_4w", 7};
  return c.set("shape", "4:4097:1024");
}

std::vector<Var> vars() {
  std::vector<Var> v = {list_var("shape", 0, kMaxDim, "", "shape of a, b and out: 1 to 4 ':'-joined dimensions"),
                        int_var("a_zp", -1000, 1000, "0", "a_zero_point (outside [-128, 127]: invalid)"),
                        int_var("b_zp", -1000, 1000, "0", "b_zero_point (outside [-128, 127]: invalid)")};
  for (Var& c : common_vars()) v.push_back(std::move(c));
  v.push_back(word_var("bad_value", {"none", "a_scale_zero", "b_scale_negative", "output_scale_huge"},
                       "none", "one invalid scale (scales_valid)"));
  v.push_back(list_var("bshape", 0, kMaxDim, "shape", "b's shape (invalid when it differs)"));
  return v;
}

}  // namespace

OpContract q8ta_add_contract() {
  const std::vector<std::string> layouts = {"buffer", "int8_4w", "int8_4c1w", "int8_4w4c"};
  return {
      "q8ta_add",
      "int8 + int8 -> int8 with independent quantization, mixed packed layouts",
      {"a", "b"},
      {"out"},
      {{"input_rank", "a and b have rank 1 to 4"},
       {"input_dtypes", "a and b are int8"},
       {"shapes_match", "a and b have the same shape"},
       {"scales_valid", "a_scale, b_scale and output_scale are numbers in [2^-32, 2^32] (kernels use them rounded to float32)"},
       {"zero_point_range", "a_zero_point, b_zero_point and output_zero_point are integers in [-128, 127]"},
       {"packed_dim_compatible",
        "a, b and out share the packed dimension and block size (int8_4w4c and int8_4c1w: C, 4; int8_4w: W, 4; buffer: W, 1)",
        /*about_storage=*/true}},
      {DType::i8},
      make, validate, reference, edge_cases, gen_q8ta_add, large_case,
      vars(),
      {{"a", layouts}, {"b", layouts}, {"out", layouts}},
      q8ta::classes,
      q8ta::expected_classes};
}

}  // namespace ts
