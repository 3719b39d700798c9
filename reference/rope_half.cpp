// rope_half: rotate-half RoPE (HF / NeoX), SPEC "rope_half".
#include "reference/common.h"
#include "reference/ops.h"

namespace ts {
namespace {

// HF's cos/sin tables: column d of position s has angle (pos+s) * inv_freq(d mod D/2).
void fill_tables(Tensor& cs, Tensor& sn, int64_t pos, int64_t D) {
  if (AllocationLimit::shapes_only()) return;
  const int64_t S = cs.shape[0], W = cs.shape[1], half = std::max<int64_t>(D / 2, 1);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < W; ++d) {
      double a = double(pos + s) * inv_freq(d % half, std::max<int64_t>(D, 1));
      cs.set(s * W + d, std::cos(a));
      sn.set(s * W + d, std::sin(a));
    }
}

Problem make(const Case& c) {
  int64_t B = c.get("B"), H = c.get("H"), S = c.get("S"), D = c.get("D"), pos = c.get("pos", 0);
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  p.inputs["x"] = uniform_tensor(input_dtype(c, "x"), {B, H, S, D}, c.seed, "x");
  Tensor cs(input_dtype(c, "cos"), {c.get("Sc", S), c.get("Dc", D)}), sn(input_dtype(c, "sin"), cs.shape);
  if (random_tables(c)) {
    cs = uniform_tensor(cs.dtype, cs.shape, c.seed, "cos");
    sn = uniform_tensor(sn.dtype, sn.shape, c.seed, "sin");
  } else {
    fill_tables(cs, sn, pos, D);
    p.made_from = {{"rope_pos", pos}, {"rope_base", kRopeBase}};
  }
  p.inputs["cos"] = std::move(cs);
  p.inputs["sin"] = std::move(sn);
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("rope_half");
  if (!has_inputs(c, p, {"x", "cos", "sin"})) return c.result();
  require_rank(c, p, "x", 4);
  if (c.failed()) return c.result();
  const Shape& x = p.inputs.at("x").shape;
  c.require(x[3] % 2 == 0, "head_dim_even", "head_dim (", x[3], ") must be even");
  for (const char* t : {"cos", "sin"})
    c.require(p.inputs.at(t).shape == Shape{x[2], x[3]}, "cos_sin_shape", t, " must be [S, D] = ",
              shape_str({x[2], x[3]}), ", got ", shape_str(p.inputs.at(t).shape));
  require_same_dtype(c, p);
  return c.result();
}

Tensors reference(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &cs = p.inputs.at("cos"), &sn = p.inputs.at("sin");
  const int64_t S = x.shape[2], D = x.shape[3], half = D / 2;
  Tensor out(DType::f64, x.shape);
  for (int64_t r = 0; r < x.numel() / std::max<int64_t>(D, 1); ++r) {
    int64_t s = r % S;
    for (int64_t d = 0; d < D; ++d) {
      double rot = d < half ? -x.get(r * D + d + half) : x.get(r * D + d - half);
      out.set(r * D + d, x.get(r * D + d) * cs.get(s * D + d) + rot * sn.get(s * D + d));
    }
  }
  return {{"out", std::move(out)}};
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t B, int64_t H, int64_t S, int64_t D, int64_t pos = 0) {
    Case c{"rope_half", {}, t, "buffer", uint64_t(3000 + B * 7 + H * 13 + S * 17 + D * 19 + pos)};
    c.set("B", B).set("H", H).set("S", S).set("D", D);
    if (pos) c.set("pos", pos);
    return c;
  };
  std::vector<Case> v = {
      mk(1, 32, 1, 128, 4095),  // decode at a large position
      mk(1, 8, 64, 64),         // prefill
      mk(2, 3, 5, 2),           // D = 2
      mk(1, 5, 7, 6),           // D % 4 == 2
      mk(3, 7, 11, 26),         // prime sizes, ragged
      mk(1, 1, 1, 256, 100000),
      // Arbitrary tables: the two halves of a row differ, so reading the wrong half shows.
      mk(2, 3, 6, 10, 3).set("tables", "random"),
      // Layouts: x is [B,H,S,D] = [N,C,H,W]: 5 heads channels-packed, S = 5 height-packed, D = 2 and
      // ragged widths, and tables, input and output in different layouts.
      in_storage(mk(1, 5, 3, 6, 2), "texture3d_c"),
      in_storage(mk(2, 3, 5, 10, 9), "texture3d_h;cos=buffer;out=texture3d_w"),
      in_storage(mk(1, 2, 7, 2, 1), "texture3d_w;x=texture3d_h"),
      in_storage(mk(2, 2, 3, 14, 5).set("tables", "random"), "buffer;out=texture3d_c;sin=texture3d_w"),
      // Invalid.
      mk(1, 2, 3, 5),
      mk(1, 2, 3, 8).set("Sc", 4),
      mk(1, 2, 3, 8).set("Dc", 4),
      mk(1, 2, 3, 8).set("sin_dtype", t == DType::f16 ? "float32" : "float16"),
      in_storage(mk(1, 2, 3, 8).set("Sc", 4), "texture3d_w"),
  };
  return v;
}

Case large_case() {  // x: 16,793,600 elements, one invocation each
  Case c{"rope_half", {}, DType::f32, "buffer", 7};
  return c.set("B", 1).set("H", 64).set("S", 1025).set("D", 256).set("pos", 11);
}

}  // namespace

OpContract rope_half_contract() {
  return {
      "rope_half",
      "rotate-half RoPE (HF / NeoX): x*cos + rotate_half(x)*sin",
      {"x", "cos", "sin"},
      {"out"},
      {{"input_rank", "x is [B,H,S,D]"},
       {"head_dim_even", "D is even"},
       {"cos_sin_shape", "cos and sin are exactly [S, D]"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_rope_half, large_case,
      {int_var("B", 0, kMaxDim, "", "batch"),
       int_var("H", 0, kMaxDim, "", "heads"),
       int_var("S", 0, kMaxDim, "", "sequence length"),
       int_var("D", 0, kMaxDim, "", "head dim"),
       pos_var(),
       tables_var(),
       // Invalid cases override one shape at a time:
       int_var("Sc", 0, kMaxDim, "S", "rows of cos/sin"),
       int_var("Dc", 0, kMaxDim, "D", "columns of cos/sin")},
      float_layouts({"x", "cos", "sin", "out"})};
}

}  // namespace ts
