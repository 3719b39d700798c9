// rope_cis: complex-number interleaved RoPE on [B,N,C] (SAM2 / EdgeTAM), SPEC "rope_cis".
#include <Eigen/Core>

#include "reference/common.h"
#include "reference/ops.h"

namespace ts {
namespace {

// freqs_cis layouts a case can ask for (`fshape`): the two native ones, a flat one, and one whose
// innermost dimension is not 2 (invalid). `Nf` overrides N in freqs_cis (wrong element count).
Shape freqs_shape(const std::string& form, int64_t N, int64_t C) {
  if (form == "n_c2_2") return {N, C / 2, 2};
  if (form == "1_n_c2_2") return {1, N, C / 2, 2};
  if (form == "nc2_2") return {N * C / 2, 2};
  if (form == "n_c") return {N, C};
  throw std::logic_error("rope_cis: fshape '" + form + "' is declared but not built");
}

Problem make(const Case& c) {
  int64_t B = c.get("B"), N = c.get("N"), C = c.get("C"), pos = c.get("pos", 0);
  int64_t Nf = c.get("Nf", N);
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  p.inputs["x"] = uniform_tensor(input_dtype(c, "x"), {B, N, C}, c.seed, "x");
  Tensor f(input_dtype(c, "freqs_cis"), freqs_shape(c.word("fshape", "n_c2_2"), Nf, C));
  if (random_tables(c)) {
    p.inputs["freqs_cis"] = uniform_tensor(f.dtype, f.shape, c.seed, "freqs_cis");
    return p;
  }
  // Element 2j is cos, 2j+1 sin, of pair j = n*(C/2) + k whatever the rank.
  int64_t half = std::max<int64_t>(C / 2, 1);
  const int64_t pairs = AllocationLimit::shapes_only() ? 0 : f.numel() / 2;  // no bytes to fill
  for (int64_t j = 0; j < pairs; ++j) {
    double a = double(pos + j / half) * inv_freq(j % half, std::max<int64_t>(C, 1));
    f.set(2 * j, std::cos(a));
    f.set(2 * j + 1, std::sin(a));
  }
  p.inputs["freqs_cis"] = std::move(f);
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("rope_cis");
  if (!has_inputs(c, p, {"x", "freqs_cis"})) return c.result();
  require_rank(c, p, "x", 3);
  if (c.failed()) return c.result();
  const Shape& x = p.inputs.at("x").shape;
  const Tensor& f = p.inputs.at("freqs_cis");
  c.require(x[2] % 2 == 0, "channels_even", "C (", x[2], ") must be even");
  c.require(f.numel() == x[1] * x[2], "freqs_cis_numel", "freqs_cis ", shape_str(f.shape), " must have N*C = ",
            x[1] * x[2], " elements, has ", f.numel());
  c.require(!f.shape.empty() && f.shape.back() == 2, "freqs_cis_inner_2", "freqs_cis ", shape_str(f.shape),
            " must have innermost dimension 2");
  require_same_dtype(c, p);
  return c.result();
}

Tensors reference(const Problem& p) {
  const Tensor &x = p.inputs.at("x"), &f = p.inputs.at("freqs_cis");
  const int64_t NC = x.shape[1] * x.shape[2];
  Eigen::ArrayXd cs(NC / 2), sn(NC / 2);
  for (int64_t j = 0; j < NC / 2; ++j) {
    cs[j] = f.get(2 * j);
    sn[j] = f.get(2 * j + 1);
  }
  Tensor out(DType::f64, x.shape);
  for (int64_t pair = 0; pair < x.numel() / 2; ++pair) {
    int64_t j = pair % (NC / 2);
    double a = x.get(2 * pair), b = x.get(2 * pair + 1);
    out.set(2 * pair, a * cs[j] - b * sn[j]);
    out.set(2 * pair + 1, a * sn[j] + b * cs[j]);
  }
  return {{"out", std::move(out)}};
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t B, int64_t N, int64_t C, std::string fshape = "n_c2_2", int64_t pos = 0) {
    Case c{"rope_cis", {}, t, "buffer", uint64_t(2000 + B * 7 + N * 13 + C * 17 + pos)};
    c.set("B", B).set("N", N).set("C", C).set("fshape", std::move(fshape));
    if (pos) c.set("pos", pos);
    return c;
  };
  std::vector<Case> v = {
      mk(1, 64, 256),               // SAM2 memory-attention width
      mk(2, 4096, 64, "1_n_c2_2"),  // the batched native shape, many positions
      mk(1, 1, 2),                  // one pair
      mk(3, 7, 6, "nc2_2"),         // C % 4 == 2, flat freqs
      mk(1, 13, 22, "n_c2_2", 5000),
      mk(5, 1, 30, "1_n_c2_2"),
      mk(3, 5, 14, "nc2_2", 2).set("tables", "random"),  // arbitrary (cos, sin) pairs
      // Layouts: x is [B,N,C] = [C,H,W] of the texel model, freqs_cis [N,C/2,2] packs N as channels.
      in_storage(mk(3, 5, 6, "n_c2_2", 3), "texture3d_c"),
      in_storage(mk(2, 5, 10, "1_n_c2_2", 11), "texture3d_h"),
      in_storage(mk(1, 3, 14, "nc2_2", 1), "texture3d_w;out=texture3d_c"),
      in_storage(mk(2, 2, 2, "n_c2_2", 40), "buffer;freqs_cis=texture3d_w;x=texture3d_h"),
      // Invalid.
      mk(1, 4, 7, "nc2_2"),  // C odd, freqs_cis still N*C elements of pairs
      mk(1, 4, 8).set("Nf", 3),
      mk(1, 4, 8, "n_c"),
      mk(1, 4, 8).set("freqs_cis_dtype", t == DType::f16 ? "float32" : "float16"),
      in_storage(mk(1, 4, 8).set("Nf", 3), "texture3d_h"),
  };
  return v;
}

Case large_case() {  // x: 16,793,600 elements, 8.4M pairs (one invocation each)
  Case c{"rope_cis", {}, DType::f32, "buffer", 7};
  return c.set("B", 64).set("N", 1025).set("C", 256).set("pos", 7);
}

}  // namespace

OpContract rope_cis_contract() {
  return {
      "rope_cis",
      "complex-number interleaved RoPE on [B,N,C] (SAM2 / EdgeTAM memory attention)",
      {"x", "freqs_cis"},
      {"out"},
      {{"input_rank", "x is [B,N,C]"},
       {"channels_even", "C is even"},
       {"freqs_cis_numel", "freqs_cis has exactly N*C elements"},
       {"freqs_cis_inner_2", "freqs_cis has innermost dimension 2"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_rope_cis, large_case,
      {int_var("B", 0, kMaxDim, "", "batch"),
       int_var("N", 0, kMaxDim, "", "tokens"),
       int_var("C", 0, kMaxDim, "", "channels"),
       pos_var(),
       tables_var(),
       word_var("fshape", {"n_c2_2", "1_n_c2_2", "nc2_2", "n_c"}, "n_c2_2",
                "freqs_cis shape: [N,C/2,2], [1,N,C/2,2], [N*C/2,2], or [N,C] (innermost not 2: invalid)"),
       // Invalid cases:
       int_var("Nf", 0, kMaxDim, "N", "N of freqs_cis (a wrong element count)")},
      float_layouts({"x", "freqs_cis", "out"})};
}

}  // namespace ts
