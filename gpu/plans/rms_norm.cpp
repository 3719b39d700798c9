// rms_norm's plan: rstd per row (a workgroup each, a tree sum), then one invocation per output texel.
#include <cmath>

#include "core/runner.h"
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"

namespace ts {
namespace {

// Invocations per row of the rstd pass, a power of two (the tree): the kernels' WG and WGR.
constexpr uint32_t kRowWg = 64;

struct Dims {
  int64_t rows, H;
};
Dims dims(const Problem& p) {
  const Shape& x = p.inputs.at("x").shape;
  return {x[0] * x[1], x[2]};
}

// rstd [rows] is float32 scratch, written whole by the first pass.
std::vector<BufferSpec> buffers(const Problem& p) {
  return {{"out", p.inputs.at("x").shape, p.dtype}, {"rstd", {dims(p).rows}, DType::f32, BufferSpec::Role::scratch}};
}

// Whether every texel of the tensor lies in one row: a buffer whose rows are whole texels, or
// texture3d_w, whose texels run along H.
bool rows_in_whole_texels(const Problem& p, const std::string& tensor) {
  const Layout l = p.layout(tensor);
  return l == Layout::texture3d_w || (l == Layout::buffer && dims(p).H % 4 == 0);
}

// One workgroup per row computes rstd and, where x's and out's texels each lie in one row, stores the
// row (PASS 2: x read twice, the second time from cache); otherwise a second dispatch stores one
// texel an invocation from the rows' rstd (PASS 0).
std::vector<Dispatch> plan(const Problem& p) {
  const Dims d = dims(p);
  const double eps = double(float(p.params.at("eps").get<double>()));
  const std::map<std::string, double> shape = {{"H", double(d.H)}, {"inv_h", double(float(1.0 / double(d.H)))}, {"eps", eps}};
  const std::string wgr = cat("WGR=", kRowWg);
  const bool fused = rows_in_whole_texels(p, "x") && rows_in_whole_texels(p, "out");
  Dispatch rows{"rms_norm", {fused ? "PASS=2" : "PASS=1", wgr}, uint64_t(d.rows) * kRowWg, shape};
  rows.uniforms["n"] = double(d.rows);
  rows.workgroup = kRowWg;
  if (fused) return {rows};
  const uint64_t texels = out_texels(p, "out", p.inputs.at("x").shape);
  Dispatch apply{"rms_norm", {"PASS=0", wgr}, texels, shape};
  apply.uniforms["n"] = double(texels);
  return {rows, apply};
}

// x and weight read once, out written once.
double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"x"}); }

// Higham's gamma_n at float32's u, infinite where n u reaches 1 (a bound of nothing).
double gamma_or_inf(double n) { return n * kUnitF32 < 1 ? gamma_f32(n) : INFINITY; }

// Per element, relative to the exact |out| = |x w| / sqrt(a), a = mean(x^2) + eps (every term
// non-negative, so relative bounds add up; any summation order, fma contraction, rounding direction):
//  - the sum of H squares: each term passes at most H roundings (its square, at most H - 1
//    additions in any tree); times inv_h (1/H rounded on the host) and rounded; plus eps (rounded to
//    float32 on the host) and rounded: a (1 + t), |t| <= gamma(H + 4).
//  - inversesqrt within 2 ulp (GLSL.std.450 and WGSL alike): rstd = a^-1/2 (1 + t)^-1/2 (1 + e),
//    |e| <= 2u, and |(1 + t)^-1/2 - 1| <= 1.5 |t| while |t| <= 1/2: relative r = (1 + 1.5 gamma)(1 + 2u) - 1.
//  - (x rstd) w, two roundings: |err| <= |out| (r + gamma(2) (1 + r)).
Tolerance tolerance(const Problem& p) {
  const Dims d = dims(p);
  const double t = gamma_or_inf(double(d.H + 4));
  const double r = t <= 0.5 ? (1 + 1.5 * t) * (1 + 2 * kUnitF32) - 1 : INFINITY, rel = r + gamma_f32(2) * (1 + r);
  const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight");
  const double eps = p.params.at("eps").get<double>();
  Tensor bound(DType::f64, x.shape);
  double* o = reinterpret_cast<double*>(bound.bytes.data());
  std::vector<double> row(static_cast<size_t>(d.H));
  for (int64_t i = 0; i < d.rows; ++i) {
    x.values(i * d.H, d.H, row.data());
    double ss = 0;
    for (double v : row) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / double(d.H) + eps);
    for (int64_t h = 0; h < d.H; ++h) o[i * d.H + h] = rel * std::fabs(row[size_t(h)] * inv * w.get(h));
  }
  return derived_tolerance(p.dtype, {{"out", std::move(bound)}});
}

// The kernels' order, the same in every layout: invocation l of a row sums the groups of four h
// 4k .. 4k+3 for k = l, l + kRowWg, ..., one square at a time in h order, the parts as a tree;
// inversesqrt pushed 2 ulp.
Floats emulate(const Problem& p, const Floats& in, bool up) {
  const Dims d = dims(p);
  const std::vector<float> &x = in.at("x"), &w = in.at("weight");
  const float inv_h = float(1.0 / double(d.H)), eps = float(p.params.at("eps").get<double>());
  std::vector<float> o(x.size());
  for (int64_t r = 0; r < d.rows; ++r) {
    std::vector<float> part(kRowWg, 0.0f);
    for (int64_t h = 0; h < d.H; ++h) {
      const float v = x[size_t(r * d.H + h)];
      part[size_t(h / 4 % kRowWg)] += v * v;
    }
    for (uint32_t k = kRowWg / 2; k > 0; k /= 2)
      for (uint32_t l = 0; l < k; ++l) part[l] += part[l + k];
    const float a = part[0] * inv_h + eps;
    const float rstd = push(float(1.0 / std::sqrt(double(a))), 2, up);
    for (int64_t h = 0; h < d.H; ++h) o[size_t(r * d.H + h)] = (x[size_t(r * d.H + h)] * rstd) * w[size_t(h)];
  }
  return {{"out", o}};
}

// Coverage: a row longer than a workgroup, and which passes ran.
std::vector<std::string> plan_classes(const Expected& e, const std::vector<Dispatch>& plan) {
  std::vector<std::string> out;
  if (e.c.get("H") > int64_t(kRowWg)) out.push_back("H > a workgroup");
  if (!plan.empty()) out.push_back(plan.size() == 1 ? "one pass (rows in whole texels)" : "two passes");
  return out;
}

std::vector<std::string> expected_plan_classes(const OpDef&) {
  return {"H > a workgroup", "one pass (rows in whole texels)", "two passes"};
}

// One row of Llama-2 7B's hidden size per token, a prefill's worth of tokens.
const std::vector<BenchWorkload> kBench = {
    {"rms_norm f16 S4096 H4096", "rms_norm/B=1,S=4096,H=4096/float16/buffer/seed=8", "rms_norm/B=1,S=64,H=4096/float16/buffer/seed=8"},
};

}  // namespace

OpContract rms_norm_contract();

const OpDef& rms_norm_op() {
  static const OpDef op{rms_norm_contract(), {buffers, plan, tolerance, emulate, bytes_moved, nullptr, kBench, plan_classes, expected_plan_classes}};
  return op;
}

}  // namespace ts
