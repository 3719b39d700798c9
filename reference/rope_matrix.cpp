// rope_matrix: RoPE as a matrix product (ROME), including 3-D RoPE, SPEC "rope_matrix":
// out = x*cos + (x @ m)*sin.

#include "reference/common.h"
#include "reference/gemm.h"
#include "reference/ops.h"

namespace ts {
namespace {

// Section widths from `sections=a:b:c` (default: one section of width D).
std::vector<int64_t> sections_of(const Case& c, int64_t D) {
  std::vector<int64_t> s = c.list("sections");
  if (s.empty()) return {D};
  int64_t sum = 0;
  for (int64_t w : s) sum += w;
  if (sum != D) throw UsageError(cat("rope_matrix: variable sections=", c.word("sections", ""), " must sum to D (", D, "), sums to ", sum));
  return s;
}

// m and cos/sin for `mode`: "half" / "interleave" build the block-diagonal rotation of each section
// (the matrix form of rope_half / rope_llama), "dense" a random m and random tables (a plain matmul).
void fill(const Case& c, Tensor& m, Tensor& cs, Tensor& sn, int64_t D) {
  const std::string mode = c.word("mode", "half");
  const int64_t pos = c.get("pos", 0);
  if (mode == "dense") {
    m = uniform_tensor(m.dtype, m.shape, c.seed, "m");
    cs = uniform_tensor(cs.dtype, cs.shape, c.seed, "cos");
    sn = uniform_tensor(sn.dtype, sn.shape, c.seed, "sin");
    return;
  }
  if (AllocationLimit::shapes_only()) return;
  const int64_t Dm = m.shape[1];
  int64_t off = 0, sec = 0;
  for (int64_t w : sections_of(c, D)) {
    if (w % 2) throw UsageError(cat("rope_matrix: variable sections=", c.word("sections", ""), " must hold even widths for mode ", mode));
    for (int64_t j = 0; j < w / 2; ++j) {
      // Rotation partner columns a, b of pair j inside this section.
      int64_t a = mode == "half" ? off + j : off + 2 * j, b = mode == "half" ? off + j + w / 2 : off + 2 * j + 1;
      if (a < m.shape[0] && b < Dm && b < m.shape[0] && a < Dm) {
        m.set(b * Dm + a, -1.0);  // (x@m)[a] = -x[b]
        m.set(a * Dm + b, 1.0);   // (x@m)[b] =  x[a]
      }
      for (int64_t s = 0; s < cs.shape[0]; ++s) {
        // 3-D RoPE gives each section its own position axis; (sec+1) stands in for it.
        double ang = double((pos + s) * (sec + 1)) * inv_freq(j, w);
        for (int64_t col : {a, b})
          if (col < cs.shape[1]) {
            cs.set(s * cs.shape[1] + col, std::cos(ang));
            sn.set(s * sn.shape[1] + col, std::sin(ang));
          }
      }
    }
    off += w;
    ++sec;
  }
}

Problem make(const Case& c) {
  int64_t B = c.get("B"), H = c.get("H"), S = c.get("S"), D = c.get("D");
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  p.params = {{"mode", c.word("mode", "half")}, {"sections", sections_of(c, D)}};
  p.inputs["x"] = uniform_tensor(input_dtype(c, "x"), {B, H, S, D}, c.seed, "x");
  Tensor m(input_dtype(c, "m"), {c.get("Dm", D), D});
  Tensor cs(input_dtype(c, "cos"), {c.get("Sc", S), c.get("Dc", D)}), sn(input_dtype(c, "sin"), cs.shape);
  fill(c, m, cs, sn, D);
  p.inputs["m"] = std::move(m);
  p.inputs["cos"] = std::move(cs);
  p.inputs["sin"] = std::move(sn);
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("rope_matrix");
  if (!has_inputs(c, p, {"x", "m", "cos", "sin"})) return c.result();
  require_rank(c, p, "x", 4);
  if (c.failed()) return c.result();
  const Shape& x = p.inputs.at("x").shape;
  c.require(p.inputs.at("m").shape == Shape{x[3], x[3]}, "m_shape", "m must be [D, D] = ",
            shape_str({x[3], x[3]}), ", got ", shape_str(p.inputs.at("m").shape));
  for (const char* t : {"cos", "sin"})
    c.require(p.inputs.at(t).shape == Shape{x[2], x[3]}, "cos_sin_shape", t, " must be [S, D] = ",
              shape_str({x[2], x[3]}), ", got ", shape_str(p.inputs.at(t).shape));
  require_same_dtype(c, p);
  return c.result();
}

// x @ m as a real matrix product, in row blocks: only the float64 output is ever whole in memory.
Tensors reference(const Problem& p) {
  const Tensor& xt = p.inputs.at("x");
  const int64_t S = xt.shape[2], D = xt.shape[3], rows = D ? xt.numel() / D : 0;
  const std::vector<double> m = p.inputs.at("m").values(), cs = p.inputs.at("cos").values(),
                            sn = p.inputs.at("sin").values();
  Tensor out(DType::f64, xt.shape);
  double* o = reinterpret_cast<double*>(out.bytes.data());
  parallel_rows(rows, 2048, rows * D * D, [&](int64_t r0, int64_t r1) {
    // Per-thread scratch kept across blocks: a fresh multi-MB vector per block is a fresh mmap whose
    // pages the kernel must clear, which cost more than the product itself.
    thread_local std::vector<double> x, y;
    x.resize(size_t((r1 - r0) * D));
    y.resize(x.size());
    xt.values(r0 * D, (r1 - r0) * D, x.data());
    gemm(x.data(), r1 - r0, D, m.data(), D, y.data());
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t s = r % S, i = (r - r0) * D;
      for (int64_t d = 0; d < D; ++d) o[r * D + d] = x[i + d] * cs[s * D + d] + y[i + d] * sn[s * D + d];
    }
  });
  return {{"out", std::move(out)}};
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t B, int64_t H, int64_t S, int64_t D, std::string mode, std::string sections = "") {
    Case c{"rope_matrix", {}, t, "buffer", uint64_t(4000 + B * 7 + H * 13 + S * 17 + D * 19 + mode.size())};
    c.set("B", B).set("H", H).set("S", S).set("D", D).set("mode", std::move(mode));
    if (!sections.empty()) c.set("sections", std::move(sections));
    return c;
  };
  std::vector<Case> v = {
      mk(1, 2, 16, 128, "half", "44:44:40"),  // the seed's 3-D RoPE sections
      mk(1, 4, 1, 64, "interleave"),          // decode
      mk(1, 2, 9, 2, "half"),                 // D = 2
      mk(2, 3, 5, 6, "interleave"),           // D % 4 == 2
      mk(1, 3, 7, 17, "dense"),               // a plain matmul, odd D
      mk(1, 2, 33, 128, "dense"),             // the longest reduction of the set
      mk(1, 1, 4, 24, "interleave", "8:8:8"),
      // Layouts: x is [B,H,S,D] = [N,C,H,W], m [D,D] packs D as width or height.
      in_storage(mk(1, 3, 5, 6, "interleave"), "texture3d_c"),
      in_storage(mk(1, 2, 3, 10, "half"), "texture3d_h;m=texture3d_w;out=buffer"),
      in_storage(mk(2, 1, 2, 5, "dense"), "texture3d_w;sin=texture3d_c"),
      in_storage(mk(1, 2, 5, 12, "half", "4:4:4"), "buffer;cos=texture3d_h;m=texture3d_c;x=texture3d_w"),
      // Invalid.
      mk(1, 2, 3, 8, "half").set("Dm", 6),
      mk(1, 2, 3, 8, "half").set("Sc", 2),
      mk(1, 2, 3, 8, "half").set("Dc", 6),
      mk(1, 2, 3, 8, "half").set("m_dtype", t == DType::f16 ? "float32" : "float16"),
      in_storage(mk(1, 2, 3, 8, "half").set("Dm", 6), "texture3d_c"),
  };
  return v;
}

Case large_case() {  // x: 16,781,312 elements, one invocation each
  Case c{"rope_matrix", {}, DType::f32, "buffer", 7};
  return c.set("B", 1).set("H", 64).set("S", 4097).set("D", 64).set("mode", "interleave").set("pos", 5);
}

}  // namespace

OpContract rope_matrix_contract() {
  return {
      "rope_matrix",
      "RoPE as a matrix product (ROME), 3-D RoPE included: x*cos + (x @ m)*sin",
      {"x", "m", "cos", "sin"},
      {"out"},
      {{"input_rank", "x is [B,H,S,D]"},
       {"m_shape", "m is exactly [D, D]"},
       {"cos_sin_shape", "cos and sin are exactly [S, D]"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_rope_matrix, large_case,
      {int_var("B", 0, kMaxDim, "", "batch"),
       int_var("H", 0, kMaxDim, "", "heads"),
       int_var("S", 0, kMaxDim, "", "sequence length"),
       int_var("D", 0, kMaxDim, "", "head dim"),
       word_var("mode", {"half", "interleave", "dense"}, "half",
                "m and cos/sin: the rotate-half or interleaved rotation, or random (a plain matmul)"),
       list_var("sections", 0, kMaxDim, "D", "section widths (3-D RoPE: m block-diagonal), summing to D"),
       pos_var(),
       // Invalid cases override one shape at a time:
       int_var("Dm", 0, kMaxDim, "D", "rows of m"),
       int_var("Sc", 0, kMaxDim, "S", "rows of cos/sin"),
       int_var("Dc", 0, kMaxDim, "D", "columns of cos/sin")},
      float_layouts({"x", "m", "cos", "sin", "out"})};
}

}  // namespace ts
