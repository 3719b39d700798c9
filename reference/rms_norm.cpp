// rms_norm: root-mean-square normalisation over the hidden size (Llama's RMSNorm, T5's LayerNorm
// without centring): for each row r of x [B,S,H],
//   out[r,h] = x[r,h] / sqrt(mean_h' x[r,h']^2 + eps) * weight[h].
#include <algorithm>
#include <cmath>

#include "core/runner.h"
#include "reference/common.h"
#include "reference/ops.h"

namespace ts {

rc::Gen<Case> gen_rms_norm(const OpDef& op, DType, bool valid);  // properties/gen_rms_norm.cpp

namespace {

// The largest input magnitude: squares up to 2^80, summed over up to 2^24 of them, stay far inside
// float32's range, so a float32 kernel can be held to its bound.
constexpr double kMaxValue = 0x1p40;

// eps as a case states it: eps_micro millionths (Llama's 1e-5 is 10, 1e-6 is 1).
double eps_of(const Case& c) { return double(c.get("eps_micro", 1)) * 1e-6; }

Problem make(const Case& c) {
  const int64_t B = c.get("B"), S = c.get("S"), H = c.get("H");
  // x in [-2^e, 2^e]: within [-40, 40] every square and every sum of up to 2^24 of them stays inside
  // float32's normal range; past 40 (or past a narrower dtype's range) the case breaks values_in_range.
  const double L = std::ldexp(1.0, int(c.get("x_exp", 0)));
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  p.inputs["x"] = uniform_tensor(input_dtype(c, "x"), {B, S, H}, c.seed, "x", -L, L);
  p.inputs["weight"] = uniform_tensor(input_dtype(c, "weight"), {c.get("Hw", H)}, c.seed, "weight", -2, 2);
  p.params["eps"] = eps_of(c);
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("rms_norm");
  if (!has_inputs(c, p, {"x", "weight"})) return c.result();
  require_rank(c, p, "x", 3);
  require_rank(c, p, "weight", 1);
  if (c.failed()) return c.result();
  const Shape &x = p.inputs.at("x").shape, &w = p.inputs.at("weight").shape;
  c.require(x[2] >= 1, "hidden_size_positive", "hidden size H (", x[2], ") must be at least 1 (the mean of no values)");
  c.require(w[0] == x[2], "weight_shape", "weight ", shape_str(w), " must be [H] = [", x[2], "]");
  const auto eps = p.params.find("eps");
  const bool number = eps != p.params.end() && eps->is_number();
  const double e = number ? eps->get<double>() : NAN;
  c.require(std::isfinite(e) && e > 0 && e <= 1, "eps_positive", "eps (", number ? cat(e) : std::string("missing"),
            ") must be a number in (0, 1]: without it a row of zeros divides by zero");
  // Past 2^40 the squares of a long row would leave float32's range (x_exp documents why 40).
  for (const char* name : {"x", "weight"}) {
    const Tensor& t = p.inputs.at(name);
    for (int64_t i = 0; i < t.numel() && !c.failed(); ++i)
      c.require(std::fabs(t.get(i)) <= kMaxValue, "values_in_range", name, "[", i, "] (", t.get(i),
                ") must be finite with magnitude at most 2^40");
  }
  require_same_dtype(c, p);
  return c.result();
}

Tensors reference(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight");
  const int64_t H = x.shape[2], rows = x.numel() / std::max<int64_t>(H, 1);
  const double eps = p.params.at("eps").get<double>();
  Tensor out(DType::f64, x.shape);
  std::vector<double> row(static_cast<size_t>(H));
  for (int64_t r = 0; r < rows; ++r) {
    x.values(r * H, H, row.data());
    double ss = 0;
    for (double v : row) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / double(H) + eps);
    for (int64_t h = 0; h < H; ++h) out.set(r * H + h, row[size_t(h)] * inv * w.get(h));
  }
  return {{"out", std::move(out)}};
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t B, int64_t S, int64_t H) {
    Case c{"rms_norm", {}, t, "buffer", uint64_t(5000 + B * 7 + S * 13 + H * 17)};
    return c.set("B", B).set("S", S).set("H", H);
  };
  return {
      mk(1, 1, 4096),                          // decode: one row, Llama-2 7B's hidden size
      mk(2, 7, 64).set("eps_micro", 10),       // prefill, Llama's 1e-5
      mk(1, 3, 1),                             // H = 1: out = x / sqrt(x^2 + eps) * w
      mk(3, 5, 5), mk(1, 2, 6), mk(2, 1, 7),   // ragged hidden sizes: H % 4 = 1, 2, 3
      mk(1, 4, 130).set("x_exp", -40),         // tiny values: eps dominates the mean
      mk(1, 4, 130).set("x_exp", 40),          // huge values: squares near 2^80
      mk(2, 3, 33).set("eps_micro", 1000000),  // eps = 1
      // Layouts: x [B,S,H] = [C,H,W] of the texel model; rows across texels in texture3d_h and _c.
      in_storage(mk(2, 5, 6), "texture3d_c"),
      in_storage(mk(3, 5, 10), "texture3d_h;weight=buffer"),
      in_storage(mk(2, 3, 7), "texture3d_w;out=texture3d_h"),
      in_storage(mk(5, 2, 9), "buffer;weight=texture3d_w;x=texture3d_c"),
      // Invalid.
      mk(1, 2, 0),
      mk(1, 2, 8).set("Hw", 7),
      mk(1, 2, 8).set("eps_micro", 0),
      mk(1, 2, 8).set("eps_micro", -5),
      mk(1, 2, 8).set("x_exp", 60),
      mk(1, 2, 8).set("weight_dtype", t == DType::f16 ? "float32" : "float16"),
      in_storage(mk(1, 2, 8).set("Hw", 9), "texture3d_w"),
  };
}

// x: 16,793,603 elements; H % 4 != 0 takes the two-pass plan, whose second dispatch has one
// invocation a texel (4,198,401: the grid folds).
Case large_case() {
  Case c{"rms_norm", {}, DType::f32, "buffer", 7};
  return c.set("B", 1).set("S", 4097).set("H", 4099);
}

// Coverage: ragged hidden sizes, and values whose squares are far from 1.
std::vector<std::string> classes(const Expected& e) {
  const int64_t x_exp = e.c.get("x_exp", 0);
  std::vector<std::string> out;
  if (e.c.get("H") % 4 != 0) out.push_back("H%4!=0");
  if (x_exp < 0) out.push_back("tiny values (x_exp<0)");
  if (x_exp > 0) out.push_back("huge values (x_exp>0)");
  return out;
}

std::vector<std::string> expected_classes(const OpDef&) { return {"H%4!=0", "tiny values (x_exp<0)", "huge values (x_exp>0)"}; }

}  // namespace

OpContract rms_norm_contract() {
  return {
      "rms_norm",
      "RMS normalisation over the hidden size: x / sqrt(mean(x^2) + eps) * weight (Llama RMSNorm)",
      {"x", "weight"},
      {"out"},
      {{"input_rank", "x is [B,S,H], weight [H]"},
       {"hidden_size_positive", "H >= 1"},
       {"weight_shape", "weight is [H]"},
       {"eps_positive", "params.eps is a number in (0, 1]"},
       {"values_in_range", "x and weight hold finite values of magnitude at most 2^40"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_rms_norm, large_case,
      {int_var("B", 0, kMaxDim, "", "batch"),
       int_var("S", 0, kMaxDim, "", "sequence length"),
       int_var("H", 0, kMaxDim, "", "hidden size (the normalised dimension)"),
       int_var("eps_micro", -1000000, 1000000, "1", "eps = eps_micro / 10^6 (0 or less: invalid)"),
       int_var("x_exp", -40, 127, "0", "x drawn from [-2^e, 2^e] instead of [-1, 1] (past 40: invalid)"),
       // Invalid cases override one shape at a time:
       int_var("Hw", 0, kMaxDim, "H", "length of weight")},
      float_layouts({"x", "weight", "out"}),
      classes,
      expected_classes};
}

}  // namespace ts
