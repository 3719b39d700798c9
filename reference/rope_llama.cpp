// rope_llama: interleaved RoPE on query and key (Llama apply_rotary_emb), SPEC "rope_llama".
#include "reference/ops.h"

#include <Eigen/Core>

#include "reference/common.h"

namespace ts {
namespace {

Problem make(const Case& c) {
  int64_t B = c.get("B"), S = c.get("S"), Hq = c.get("Hq"), Hkv = c.get("Hkv"), D = c.get("D");
  int64_t pos = c.get("pos", 0);
  int64_t Sf = c.get("Sf", S), Df = c.get("Df", D / 2);
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  p.inputs["xq"] = uniform_tensor(input_dtype(c, "xq"), {B, S, Hq, D}, c.seed, "xq");
  p.inputs["xk"] = uniform_tensor(input_dtype(c, "xk"), {c.get("Bk", B), c.get("Sk", S), Hkv, c.get("Dk", D)},
                                  c.seed, "xk");
  if (random_tables(c)) {
    p.inputs["freqs_cos"] = uniform_tensor(input_dtype(c, "freqs_cos"), {Sf, Df}, c.seed, "freqs_cos");
    p.inputs["freqs_sin"] = uniform_tensor(input_dtype(c, "freqs_sin"), {Sf, Df}, c.seed, "freqs_sin");
    return p;
  }
  Tensor fc(input_dtype(c, "freqs_cos"), {Sf, Df}), fs(input_dtype(c, "freqs_sin"), {Sf, Df});
  const int64_t rows = AllocationLimit::shapes_only() ? 0 : Sf;  // no bytes to fill
  for (int64_t s = 0; s < rows; ++s)
    for (int64_t i = 0; i < Df; ++i) {
      double a = double(pos + s) * inv_freq(i, std::max<int64_t>(D, 1));
      fc.set(s * Df + i, std::cos(a));
      fs.set(s * Df + i, std::sin(a));
    }
  p.inputs["freqs_cos"] = std::move(fc);
  p.inputs["freqs_sin"] = std::move(fs);
  p.made_from = {{"rope_pos", pos}, {"rope_base", kRopeBase}};
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("rope_llama");
  if (!has_inputs(c, p, {"xq", "xk", "freqs_cos", "freqs_sin"})) return c.result();
  require_rank(c, p, "xq", 4);
  require_rank(c, p, "xk", 4);
  if (c.failed()) return c.result();
  const Shape &q = p.inputs.at("xq").shape, &k = p.inputs.at("xk").shape;
  int64_t D = q[3];
  c.require(D % 2 == 0, "head_dim_even", "head_dim (", D, ") must be even");
  c.require(D >= 2, "head_dim_at_least_2", "head_dim (", D, ") must be at least 2");
  c.require(k[0] == q[0], "q_k_batch_match", "xk batch (", k[0], ") must equal xq batch (", q[0], ")");
  c.require(k[1] == q[1], "q_k_seq_match", "xk seq_len (", k[1], ") must equal xq seq_len (", q[1], ")");
  c.require(k[3] == D, "q_k_head_dim_match", "xk head_dim (", k[3], ") must equal xq head_dim (", D, ")");
  for (const char* f : {"freqs_cos", "freqs_sin"}) {
    const Shape& fs = p.inputs.at(f).shape;
    c.require(fs == Shape{q[1], D / 2}, "freqs_shape", f, " must be [S, D/2] = ", shape_str({q[1], D / 2}),
              ", got ", shape_str(fs));
  }
  require_same_dtype(c, p);
  return c.result();
}

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rotates every (even, odd) pair of x [B,S,H,D] by the angle of its position s and pair i.
Tensor rotate(const Tensor& x, const Mat& c, const Mat& n) {
  const int64_t S = x.shape[1], H = x.shape[2], D = x.shape[3], half = D / 2;
  Tensor out(DType::f64, x.shape);
  for (int64_t r = 0; r < x.numel() / D; ++r) {
    int64_t s = (r / H) % S;
    for (int64_t i = 0; i < half; ++i) {
      double a = x.get(r * D + 2 * i), b = x.get(r * D + 2 * i + 1);
      out.set(r * D + 2 * i, a * c(s, i) - b * n(s, i));
      out.set(r * D + 2 * i + 1, a * n(s, i) + b * c(s, i));
    }
  }
  return out;
}

Mat to_mat(const Tensor& t) {
  Mat m(t.shape[0], t.shape[1]);
  for (int64_t i = 0; i < t.numel(); ++i) m(i / t.shape[1], i % t.shape[1]) = t.get(i);
  return m;
}

Tensors reference(const Problem& p) {
  Mat c = to_mat(p.inputs.at("freqs_cos")), n = to_mat(p.inputs.at("freqs_sin"));
  return {{"xq_out", rotate(p.inputs.at("xq"), c, n)}, {"xk_out", rotate(p.inputs.at("xk"), c, n)}};
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D, int64_t pos = 0) {
    Case c{"rope_llama", {}, t, "buffer", uint64_t(1000 + B * 7 + S * 13 + Hq * 17 + Hkv * 19 + D * 23 + pos)};
    c.set("B", B).set("S", S).set("Hq", Hq).set("Hkv", Hkv).set("D", D);
    if (pos) c.set("pos", pos);
    return c;
  };
  std::vector<Case> v = {
      mk(1, 1, 32, 8, 128, 17),   // decode, GQA 4:1, Llama-3 8B head shape (pos 0 would be the identity)
      mk(1, 1, 32, 32, 128, 4095), // decode at a large position
      mk(1, 7, 8, 1, 64),         // MQA
      mk(2, 3, 4, 4, 2),          // smallest head (D=2)
      mk(1, 5, 3, 3, 6),          // D % 4 == 2: a ragged half texel
      mk(1, 13, 16, 2, 10),       // GQA 8:1, ragged D
      mk(3, 11, 7, 7, 22),        // prime sizes
      mk(1, 1, 1, 1, 2, 100000),  // one pair, huge position
      mk(1, 64, 8, 2, 128, 8192), // prefill chunk at a large offset
      mk(2, 5, 12, 4, 14, 9).set("tables", "random"),  // arbitrary tables: each pair reads its own (s, i)
      // Layouts: xq is [B,S,H,D] = [N,C,H,W]. S = 5 channels-packed (a full texel and a ragged one),
      // 5 heads height-packed, a ragged width, and inputs and outputs in different layouts.
      in_storage(mk(1, 5, 3, 3, 6, 2), "texture3d_c"),
      in_storage(mk(2, 3, 5, 5, 2, 9), "texture3d_h"),
      in_storage(mk(1, 2, 8, 2, 10, 4), "texture3d_w"),
      in_storage(mk(2, 3, 4, 2, 14, 7), "texture3d_c;freqs_cos=buffer;xk_out=texture3d_w"),
      in_storage(mk(1, 7, 6, 3, 22, 30).set("tables", "random"),
                 "buffer;freqs_sin=texture3d_h;xq=texture3d_w;xq_out=texture3d_c"),
  };
  // Invalid: each rule broken on its own.
  v.push_back(mk(1, 2, 2, 2, 7).set("Df", 3));  // D odd (freqs made consistent: only head_dim_even fires)
  v.push_back(mk(1, 2, 2, 2, 0));
  v.push_back(mk(2, 2, 2, 2, 8).set("Bk", 1));
  v.push_back(mk(1, 3, 2, 2, 8).set("Sk", 2));
  v.push_back(mk(1, 3, 2, 1, 8).set("Dk", 6));
  v.push_back(mk(1, 3, 2, 2, 8).set("Sf", 4));
  v.push_back(mk(1, 3, 2, 2, 8).set("Df", 8));
  v.push_back(mk(1, 3, 2, 2, 8).set("xk_dtype", t == DType::f16 ? "float32" : "float16"));
  v.push_back(in_storage(mk(1, 3, 2, 2, 8).set("Sk", 2), "texture3d_c"));  // rejected before any image exists
  return v;
}

// xq: 17,309,952 elements; D = 132 takes one texel an invocation: 4,395,105 invocations.
Case large_case() {
  Case c{"rope_llama", {}, DType::f32, "buffer", 7};
  return c.set("B", 1).set("S", 2049).set("Hq", 64).set("Hkv", 1).set("D", 132).set("pos", 3);
}

}  // namespace

OpContract rope_llama_contract() {
  return {
      "rope_llama",
      "interleaved RoPE on query and key (Llama apply_rotary_emb)",
      {"xq", "xk", "freqs_cos", "freqs_sin"},
      {"xq_out", "xk_out"},
      {{"input_rank", "xq and xk are [B,S,H,D]"},
       {"head_dim_even", "D is even"},
       {"head_dim_at_least_2", "D >= 2"},
       {"q_k_batch_match", "xq and xk agree on B"},
       {"q_k_seq_match", "xq and xk agree on S"},
       {"q_k_head_dim_match", "xq and xk agree on D"},
       {"freqs_shape", "freqs_cos and freqs_sin are exactly [S, D/2]"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_rope_llama, large_case,
      {int_var("B", 0, kMaxDim, "", "batch"),
       int_var("S", 0, kMaxDim, "", "sequence length"),
       int_var("Hq", 0, kMaxDim, "", "query heads"),
       int_var("Hkv", 0, kMaxDim, "", "key heads (GQA: Hq/Hkv query heads share one; MQA: 1)"),
       int_var("D", 0, kMaxDim, "", "head dim"),
       pos_var(),
       tables_var(),
       // Invalid cases override one shape at a time:
       int_var("Bk", 0, kMaxDim, "B", "xk batch"),
       int_var("Sk", 0, kMaxDim, "S", "xk sequence length"),
       int_var("Dk", 0, kMaxDim, "D", "xk head dim"),
       int_var("Sf", 0, kMaxDim, "S", "rows of freqs_cos/sin"),
       int_var("Df", 0, kMaxDim, "D/2", "columns of freqs_cos/sin")},
      float_layouts({"xq", "xk", "freqs_cos", "freqs_sin", "xq_out", "xk_out"})};
}

}  // namespace ts
