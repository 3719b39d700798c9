// rope_matrix's plan: one invocation per output texel, each a row of x times a column of m.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"
#include "reference/gemm.h"

namespace ts {
namespace {

std::vector<BufferSpec> buffers(const Problem& p) { return {{"out", p.inputs.at("x").shape, p.dtype}}; }

double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"x"}); }
// Per output element: a D-term dot product with m (2D), then x*cos + acc*sin (3).
double flops(const Problem& p) {
  const Tensor& x = p.inputs.at("x");
  return double(x.numel()) * (2.0 * double(x.shape[3]) + 3.0);
}

std::vector<Dispatch> plan(const Problem& p) {
  const Shape& x = p.inputs.at("x").shape;
  uint64_t n = out_texels(p, "out", x);  // one invocation per output texel
  return {{"rope_matrix", {}, n, {{"n", double(n)}, {"S", double(x[2])}, {"D", double(x[3])}}}};
}

// out[d] = x[d]*cos[d] + acc[d]*sin[d] with acc[d] = sum_k x[k] m[k,d] accumulated in float32 from
// inputs exact in float32. A zero m[k,d] adds an exact zero, so acc[d] is a dot product of
// k_d = nnz(column d) terms: it errs by at most gamma(k_d) M[d], M[d] = sum_k |x[k] m[k,d]|, in any
// order, fma or not. The final expression rounds each product term at most twice and |acc[d]| <=
// (1 + gamma(k_d)) M[d], so (gamma_2 + gamma_k + gamma_2 gamma_k <= gamma_{k+2}, Higham lemma 3.3)
//   |err| <= gamma_2 |x[d] cos[d]| + gamma(k_d + 2) |sin[d]| M[d].
// For the rotation matrices (one +-1 per column) that is gamma_3 |sin[d]| |x[partner]|. M is a product
// of absolute values: over the non-zeros when m is sparse, else a float64 matrix product.
Tolerance tolerance(const Problem& p) {
  const Tensor& xt = p.inputs.at("x");
  const int64_t S = xt.shape[2], D = xt.shape[3], rows = D ? xt.numel() / D : 0;
  std::vector<double> m = p.inputs.at("m").values();
  const std::vector<double> cs = p.inputs.at("cos").values(), sn = p.inputs.at("sin").values();
  std::vector<int64_t> nnz(static_cast<size_t>(D), 0);
  std::vector<std::pair<int64_t, double>> entries;  // (k * D + d, |m[k,d]|) of the non-zeros
  for (int64_t i = 0; i < D * D; ++i) {
    m[size_t(i)] = std::fabs(m[size_t(i)]);
    if (m[size_t(i)] != 0) nnz[size_t(i % D)]++, entries.emplace_back(i, m[size_t(i)]);
  }
  std::vector<double> g_sin(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) g_sin[size_t(d)] = gamma_f32(double(nnz[size_t(d)] + 2));
  const double g2 = gamma_f32(2);
  const bool sparse = int64_t(entries.size()) * 8 <= D * D;
  Tensor bound(DType::f64, xt.shape);
  double* o = reinterpret_cast<double*>(bound.bytes.data());
  parallel_rows(rows, 2048, sparse ? rows * int64_t(entries.size()) : rows * D * D, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<double> x, M;
    x.resize(size_t((r1 - r0) * D));
    M.assign(x.size(), 0.0);
    xt.values(r0 * D, (r1 - r0) * D, x.data());
    for (double& v : x) v = std::fabs(v);
    if (sparse) {
      for (int64_t r = 0; r < r1 - r0; ++r)
        for (auto [kd, a] : entries) M[size_t(r * D + kd % D)] += x[size_t(r * D + kd / D)] * a;
    } else {
      gemm(x.data(), r1 - r0, D, m.data(), D, M.data());
    }
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t s = r % S, i = (r - r0) * D;
      for (int64_t d = 0; d < D; ++d)
        o[r * D + d] = g2 * x[size_t(i + d)] * std::fabs(cs[size_t(s * D + d)]) +
                       g_sin[size_t(d)] * std::fabs(sn[size_t(s * D + d)]) * M[size_t(i + d)];
    }
  });
  return derived_tolerance(p.dtype, {{"out", std::move(bound)}});
}

// out = x*cos + (x @ m)*sin in float32, the product's terms in k order (gpu/vulkan/shaders/rope_matrix.comp).
Floats emulate(const Problem& p, const Floats& in, bool) {
  const std::vector<float> &x = in.at("x"), &cs = in.at("cos"), &sn = in.at("sin"), &m = in.at("m");
  const int64_t S = p.inputs.at("x").shape[2], D = p.inputs.at("x").shape[3];
  std::vector<float> o(x.size());
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    const int64_t d = i % D, s = (i / D) % S, base = i - d;
    float r = 0.0f;
    for (int64_t k = 0; k < D; ++k) r += x[size_t(base + k)] * m[size_t(k * D + d)];
    o[size_t(i)] = x[size_t(i)] * cs[size_t(s * D + d)] + r * sn[size_t(s * D + d)];
  }
  return {{"out", o}};
}

}  // namespace

OpContract rope_matrix_contract();

const OpDef& rope_matrix_op() {
  static const OpDef op{rope_matrix_contract(), {buffers, plan, tolerance, emulate, bytes_moved, flops}};
  return op;
}

}  // namespace ts
