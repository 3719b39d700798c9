// The derived tolerances (reference/*.cpp) hold for every float32 evaluation that the Vulkan and
// WGSL precision rules allow, not only for the round-to-nearest of the devices at hand: each kernel
// is emulated on the CPU in float32 under all four IEEE rounding directions (both specs leave the
// direction to the implementation), with exp() pushed 2 + 2|x| ulps and the reciprocal one more ulp
// in that direction (the specs allow 3 + 2|x| and 2.5), and stores to float16 rounded in that
// direction too (bfloat16 stores round to nearest even in integer arithmetic, whatever the
// direction). Every valid case of the default sweep must pass under every direction; the worst
// error/tolerance ratio is printed (directed rounding errs up to twice round-to-nearest).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/half.h"
#include "core/runner.h"
#include "reference/q8ta_common.h"
#include "reference/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {

struct Direction {
  int mode;
  const char* name;
  bool up;  // which way exp() and the reciprocal (both positive) are pushed
};
const Direction kDirections[] = {{FE_TONEAREST, "nearest", true},
                                 {FE_UPWARD, "upward", true},
                                 {FE_DOWNWARD, "downward", false},
                                 {FE_TOWARDZERO, "toward-zero", false}};

// v moved int(ulps) representable floats up or down (as that many nextafter steps, stopping at
// infinity), in O(1): a large logit asks for thousands of steps per exp.
float push(float v, double ulps, bool up) {
  if (std::isnan(v)) return v;
  constexpr int64_t kInf = 0x7f800000;  // +inf's bits: floats ordered as integers, -0 and +0 at 0
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  int64_t ord = (bits & 0x80000000u) ? -int64_t(bits & 0x7fffffffu) : int64_t(bits);
  const int64_t n = int64_t(std::min(std::floor(ulps), double(2 * kInf)));
  ord = std::clamp(up ? ord + n : ord - n, -kInf, kInf);
  bits = ord < 0 ? uint32_t(-ord) | 0x80000000u : uint32_t(ord);
  std::memcpy(&v, &bits, 4);
  return v;
}

// The float32 arithmetic of each shipped kernel, in its order (gpu/vulkan/shaders/*.comp), under
// the current rounding direction. Results are the float32 values before the store.
using Values = std::map<std::string, std::vector<float>>;

// Every input as float32 (exact: inputs are float32-representable), looked up once.
struct Inputs {
  std::map<std::string, std::vector<float>> f;
  explicit Inputs(const Tensors& in) {
    for (auto& [name, t] : in) {
      std::vector<double> v = t.values();
      f[name].assign(v.begin(), v.end());
    }
  }
  const std::vector<float>& operator[](const std::string& name) const { return f.at(name); }
};

std::vector<float> rotate_pairs(const std::vector<float>& x, const Shape& shape, const std::vector<float>& fc,
                                const std::vector<float>& fs) {
  const int64_t S = shape[1], H = shape[2], D = shape[3], half = D / 2;
  std::vector<float> o(x.size());
  for (int64_t r = 0; r < numel(shape) / D; ++r) {
    const int64_t s = (r / H) % S;
    for (int64_t i = 0; i < half; ++i) {
      float a = x[size_t(r * D + 2 * i)], b = x[size_t(r * D + 2 * i + 1)], c = fc[size_t(s * half + i)],
            n = fs[size_t(s * half + i)];
      o[size_t(r * D + 2 * i)] = a * c - b * n;
      o[size_t(r * D + 2 * i + 1)] = a * n + b * c;
    }
  }
  return o;
}

// The int8 kernels' requantization (reference/q8ta_*.cpp state the model): exact integer
// accumulators, then float32 arithmetic, then round half to even, the zero point, the clamp. The
// outputs come back as the final int8 values. 1/output_scale is the host's float32 reciprocal,
// except that for an output scale that is not a power of two it is pushed one ulp further, as a
// device reciprocal (2.5 ulp) may be; a power of two's reciprocal is exact on the host.
std::vector<float> requantized(const std::string& op, const Problem& p, const Inputs& in, bool up) {
  const Params& q = p.params;
  auto scale = [&](const char* key) { return float(q.at(key).get<double>()); };
  auto zp = [&](const char* key) { return q.at(key).get<int64_t>(); };
  const float os = scale("output_scale");
  float inv = float(1.0 / double(os));
  if (!q8ta::is_pow2(os)) inv = push(inv, 1, up);
  const int64_t ozp = zp("output_zero_point");
  auto store = [&](float v) { return float(q8ta::requantize(double(v * inv), ozp)); };
  std::vector<float> o;
  if (op == "q8ta_add") {
    const float as = scale("a_scale"), bs = scale("b_scale");
    const int64_t azp = zp("a_zero_point"), bzp = zp("b_zero_point");
    const std::vector<float> &a = in["a"], &b = in["b"];
    for (size_t i = 0; i < a.size(); ++i) o.push_back(store(as * float(int64_t(a[i]) - azp) + bs * float(int64_t(b[i]) - bzp)));
    return o;
  }
  const int64_t xzp = zp("input_zero_point");
  const float is = scale("input_scale");
  const std::vector<float> &x = in["x"], &w = in["weight"], &ws = in["weight_scales"];
  const bool bias = p.inputs.count("bias") > 0;
  auto emit = [&](int32_t acc, int64_t n) {
    float y = float(acc) * is * ws[size_t(n)];
    if (bias) y += in["bias"][size_t(n)];
    o.push_back(store(y));
  };
  if (op == "q8ta_conv2d") {  // SPEC "q8ta_conv2d", output in [N, C_out, OH, OW] order
    const Shape &xs = p.inputs.at("x").shape, &wsh = p.inputs.at("weight").shape;
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], Co = wsh[0], Cg = wsh[1], KH = wsh[2], KW = wsh[3];
    auto pair = [&](const char* key, int i) { return q.at(key)[i].get<int64_t>(); };
    const int64_t sh = pair("stride", 0), sw = pair("stride", 1), ph = pair("padding", 0), pw = pair("padding", 1);
    const int64_t dh = pair("dilation", 0), dw = pair("dilation", 1), groups = q.at("groups").get<int64_t>();
    const int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1, OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t co = 0; co < Co; ++co)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int32_t acc = 0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ih = oh * sh - ph + kh * dh, iw = ow * sw - pw + kw * dw;
                  if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;  // x_zp - x_zp
                  const int64_t c = co / (Co / groups) * Cg + ci;
                  acc += (int32_t(x[size_t(((n * C + c) * H + ih) * W + iw)]) - int32_t(xzp)) *
                         int32_t(w[size_t(((co * Cg + ci) * KH + kh) * KW + kw)]);
                }
            emit(acc, co);
          }
    return o;
  }
  const Shape& xs = p.inputs.at("x").shape;
  const int64_t M = xs[0], K = xs[1], N = p.inputs.at("weight").shape[0];
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (int32_t(x[size_t(m * K + k)]) - int32_t(xzp)) * int32_t(w[size_t(n * K + k)]);
      emit(acc, n);
    }
  return o;
}

// sdpa impl=split (gpu/vulkan/shaders/sdpa_split_*.comp): scores as vec4 dots accumulated over the
// head-dim texels; per chunk of the plan's length its max m_j, weights exp(s - m_j), their sum in
// workgroup / qblock strided parts added in order, and the weighted V in key order; then the combine's rescaling by
// exp(m_j - M), the sums over chunks in 16 strided slices then over the slices, and the reciprocal.
// The decode partial (sdpa_decode_partial.comp) orders three sums its own way: a chunk's weight sum
// adds its 32 parts in 4 runs of 8, each a tree (chunk_softmax's run_sum); a cached key's score is
// a tree over 8 lanes' partial dots (lane t: texels 2t, 2t + 1, 2t + 16, 2t + 17 in order; pairs t, t ^ 4, then
// ^ 2, then ^ 1), and the weighted V adds keys in 4 strided slices (slice r: keys r, r + 4, ... of
// the chunk, this step's keys after the cached ones), the slices added in order.
std::vector<float> sdpa_split(const Problem& p, const Inputs& in, const std::vector<float>& K,
                              const std::vector<float>& V, float scale, bool up) {
  const std::vector<float>& q = in["q"];
  const int64_t S = p.inputs.at("q").shape[1], Hq = p.inputs.at("q").shape[2], D = p.inputs.at("q").shape[3];
  const int64_t Hkv = p.inputs.at("k").shape[2], pos = p.params.at("input_pos").get<int64_t>();
  int64_t chunk = 0, parts = 0;  // parts: the invocations per query that split the chunk's max and sum
  bool decode = false;
  for (const Dispatch& d : find_op("sdpa")->plan(p))
    if (d.kernel == "sdpa_split_partial" || d.kernel == "sdpa_decode_partial") {
      chunk = int64_t(d.uniforms.at("chunk"));
      parts = int64_t(d.workgroup) / int64_t(d.uniforms.at("qblock"));
      decode = d.kernel == "sdpa_decode_partial";
    }
  if (chunk <= 0 || parts <= 0) throw std::runtime_error("sdpa split plan has no partial dispatch");
  auto ex = [up](float t) { return push(float(std::exp(double(t))), 2 + 2 * std::fabs(t), up); };
  std::vector<float> o(q.size());
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t kvh = h / (Hq / Hkv), n = pos + s + 1, row = s * Hq + h;
      std::vector<float> sc(static_cast<size_t>(n));
      auto texel_dot = [&](int64_t c, int64_t d) {
        const float* a = &q[size_t(row * D + d)];
        const float* k = &K[size_t((c * Hkv + kvh) * D + d)];
        return ((a[0] * k[0] + a[1] * k[1]) + a[2] * k[2]) + a[3] * k[3];
      };
      for (int64_t c = 0; c < n; ++c) {
        float acc = 0.0f;
        if (decode && c < pos) {
          float lane[8] = {};
          for (int64_t t = 0; t < 8; ++t)
            for (int64_t u = 0; u < 4; ++u) {
              const int64_t texel = 2 * (t + 8 * (u / 2)) + u % 2;
              if (4 * texel < D) lane[t] += texel_dot(c, 4 * texel);
            }
          for (int64_t bit : {4, 2, 1})
            for (int64_t t = 0; t < 8; ++t)
              if (!(t & bit)) lane[t] = lane[t ^ bit] = lane[t] + lane[t ^ bit];
          acc = lane[0];
        } else {
          for (int64_t d = 0; d < D; d += 4) acc += texel_dot(c, d);
        }
        sc[size_t(c)] = scale * acc;
      }
      std::vector<float> m, l, od;  // per chunk; od: [chunk][D]
      for (int64_t c0 = 0; c0 < n; c0 += chunk) {
        const int64_t c1 = std::min(n, c0 + chunk);
        float mj = -1.0e30f;
        for (int64_t c = c0; c < c1; ++c) mj = std::max(mj, sc[size_t(c)]);
        std::vector<float> e(size_t(c1 - c0)), part(size_t(parts), 0.0f);
        for (int64_t c = c0; c < c1; ++c) {
          e[size_t(c - c0)] = ex(sc[size_t(c)] - mj);
          part[size_t((c - c0) % parts)] += e[size_t(c - c0)];
        }
        // The decode partial first combines each lane group's 8 parts by shuffles (a tree: partners
        // t ^ 1, ^ 2, ^ 4), then adds the groups in order; the other partial adds the parts in order.
        const int64_t run = decode ? 8 : 1;
        for (int64_t bit = 1; bit < run; bit *= 2)
          for (int64_t k = 0; k < parts; ++k)
            if (!(k & bit)) part[size_t(k)] = part[size_t(k ^ bit)] = part[size_t(k)] + part[size_t(k ^ bit)];
        float lj = part[0];
        for (int64_t k = run; k < parts; k += run) lj += part[size_t(k)];
        m.push_back(mj);
        l.push_back(lj);
        for (int64_t d = 0; d < D; ++d) {
          auto weighted = [&](int64_t c) { return e[size_t(c - c0)] * V[size_t((c * Hkv + kvh) * D + d)]; };
          float acc = 0.0f;
          if (!decode) {
            for (int64_t c = c0; c < c1; ++c) acc += weighted(c);
          } else {
            for (int64_t r = 0; r < 4; ++r) {
              float slice = 0.0f;
              for (int64_t c = c0 + r; c < c1; c += 4) slice += weighted(c);
              acc = r == 0 ? slice : acc + slice;
            }
          }
          od.push_back(acc);
        }
      }
      // The combine: 16 slices of the chunks (slice k: chunks k, k + 16, ...), added in slice order.
      const float M = *std::max_element(m.begin(), m.end());
      float L = 0.0f;
      std::vector<float> acc(size_t(D), 0.0f);
      for (size_t k = 0; k < 16; ++k) {
        float Lk = 0.0f;
        std::vector<float> ok(size_t(D), 0.0f);
        for (size_t j = k; j < m.size(); j += 16) {
          const float a = ex(m[j] - M);
          Lk += a * l[j];
          for (int64_t d = 0; d < D; ++d) ok[size_t(d)] += a * od[j * size_t(D) + size_t(d)];
        }
        L = k == 0 ? Lk : L + Lk;
        for (int64_t d = 0; d < D; ++d) acc[size_t(d)] = k == 0 ? ok[size_t(d)] : acc[size_t(d)] + ok[size_t(d)];
      }
      const float inv = push(1.0f / L, 1, up);
      for (int64_t d = 0; d < D; ++d) o[size_t(row * D + d)] = acc[size_t(d)] * inv;
    }
  return o;
}

__attribute__((noinline)) Values emulate(const std::string& op, const Problem& p, const Inputs& in, bool up) {
  auto shape = [&](const char* name) -> const Shape& { return p.inputs.at(name).shape; };
  if (op == "rope_llama") {
    return {{"xq_out", rotate_pairs(in["xq"], shape("xq"), in["freqs_cos"], in["freqs_sin"])},
            {"xk_out", rotate_pairs(in["xk"], shape("xk"), in["freqs_cos"], in["freqs_sin"])}};
  }
  if (op == "rope_cis") {
    const std::vector<float> &x = in["x"], &f = in["freqs_cis"];
    const int64_t nc2 = shape("x")[1] * shape("x")[2] / 2;
    std::vector<float> o(x.size());
    for (int64_t pr = 0; pr < int64_t(x.size()) / 2; ++pr) {
      const int64_t j = pr % nc2;
      float a = x[size_t(2 * pr)], b = x[size_t(2 * pr + 1)], c = f[size_t(2 * j)], s = f[size_t(2 * j + 1)];
      o[size_t(2 * pr)] = a * c - b * s;
      o[size_t(2 * pr + 1)] = a * s + b * c;
    }
    return {{"out", o}};
  }
  if (op == "rope_half" || op == "rope_matrix") {
    const std::vector<float> &x = in["x"], &cs = in["cos"], &sn = in["sin"];
    const int64_t S = shape("x")[2], D = shape("x")[3], hd = D / 2;
    std::vector<float> o(x.size());
    for (int64_t i = 0; i < int64_t(x.size()); ++i) {
      const int64_t d = i % D, s = (i / D) % S, base = i - d;
      float r;
      if (op == "rope_half") {
        r = d < hd ? -x[size_t(i + hd)] : x[size_t(i - hd)];
      } else {
        const std::vector<float>& m = in["m"];
        r = 0.0f;
        for (int64_t k = 0; k < D; ++k) r += x[size_t(base + k)] * m[size_t(k * D + d)];
      }
      o[size_t(i)] = x[size_t(i)] * cs[size_t(s * D + d)] + r * sn[size_t(s * D + d)];
    }
    return {{"out", o}};
  }
  if (op == "sdpa") {
    const std::vector<float>& q = in["q"];
    const int64_t S = shape("q")[1], Hq = shape("q")[2], D = shape("q")[3], Hkv = shape("k")[2];
    const int64_t pos = p.params.at("input_pos").get<int64_t>(), ctx = pos + S;
    const float scale = float(p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(double(D)));
    // The caches after update_cache: rows pos .. pos+S-1 from k and v.
    std::vector<float> K = in["k_cache"], V = in["v_cache"];
    std::copy(in["k"].begin(), in["k"].end(), K.begin() + pos * Hkv * D);
    std::copy(in["v"].begin(), in["v"].end(), V.begin() + pos * Hkv * D);
    if (p.params.value("impl", "tiled") == "split") return {{"out", sdpa_split(p, in, K, V, scale, up)}};
    std::vector<float> o(q.size()), w(static_cast<size_t>(ctx));
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t kvh = h / (Hq / Hkv);
        for (int64_t c = 0; c < ctx; ++c) {
          if (c > pos + s) {
            w[size_t(c)] = -1.0e30f;
            continue;
          }
          float acc = 0.0f;
          for (int64_t d = 0; d < D; ++d) acc += q[size_t((s * Hq + h) * D + d)] * K[size_t((c * Hkv + kvh) * D + d)];
          w[size_t(c)] = scale * acc;
        }
        float m = w[0];
        for (int64_t c = 1; c < ctx; ++c) m = std::max(m, w[size_t(c)]);
        float sum = 0.0f;
        for (int64_t c = 0; c < ctx; ++c) {
          const float t = w[size_t(c)] - m;
          // exp in float64, rounded in the current direction, then pushed: within 3 + 2|t| ulps.
          w[size_t(c)] = c > pos + s ? 0.0f : push(float(std::exp(double(t))), 2 + 2 * std::fabs(t), up);
          sum += w[size_t(c)];
        }
        const float inv = push(1.0f / sum, 1, up);
        for (int64_t c = 0; c < ctx; ++c) w[size_t(c)] *= inv;
        for (int64_t d = 0; d < D; ++d) {
          float acc = 0.0f;
          for (int64_t c = 0; c < ctx; ++c) acc += w[size_t(c)] * V[size_t((c * Hkv + kvh) * D + d)];
          o[size_t((s * Hq + h) * D + d)] = acc;
        }
      }
    return {{"out", o}};
  }
  if (op.rfind("q8ta_", 0) == 0) return {{"out", requantized(op, p, in, up)}};
  throw std::runtime_error("no emulation of " + op);
}

// Stores v as dtype t rounded in direction `mode` (the store's OpFConvert has no fixed rounding).
// bfloat16 is converted by the accessors' own integer round-to-nearest-even, the same in every
// direction (reference/common.h): Tensor::set rounds the same way.
Tensor store(const std::vector<float>& v, const Shape& shape, DType t, int mode) {
  Tensor out(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const float y = v[size_t(i)];
    if (t == DType::f32 || t == DType::bf16 || !is_float(t)) {  // int8: the emulation's values are the final integers
      out.set(i, y);
      continue;
    }
    uint16_t h = f64_to_f16(y);
    const float r = f16_to_f32(h);
    const bool want_up = mode == FE_UPWARD || (mode == FE_TOWARDZERO && y < 0);
    const bool want_down = mode == FE_DOWNWARD || (mode == FE_TOWARDZERO && y > 0);
    const bool neg = h & 0x8000, zero = (h & 0x7fff) == 0;
    if ((want_up && r < y) || (want_down && r > y)) {
      const bool up = r < y;  // one step toward y
      if (zero) h = up ? 0x0001 : 0x8001;
      else h = uint16_t(up != neg ? h + 1 : h - 1);
    }
    std::memcpy(out.bytes.data() + 2 * i, &h, 2);
  }
  return out;
}

// push's integer stepping against nextafter itself, across zero, subnormals and up to infinity.
TEST(Rounding, PushStepsAsNextafterDoes) {
  for (float v : {0.0f, -0.0f, 1.0f, -1.5f, 0x1p-149f, -0x1p-140f, 3.0e38f, -3.4e38f, INFINITY})
    for (int n : {0, 1, 2, 7, 300})
      for (bool up : {true, false}) {
        float want = v;
        for (int k = 0; k < n; ++k) want = std::nextafter(want, up ? INFINITY : -INFINITY);
        const float got = push(v, n + 0.5, up);
        EXPECT_TRUE(got == want || (std::isinf(got) && got == want)) << v << " " << n << " " << up << ": " << got << " vs " << want;
      }
  EXPECT_EQ(push(1.0f, 1e30, true), INFINITY);
  EXPECT_EQ(push(1.0f, 1e30, false), -INFINITY);
  EXPECT_TRUE(std::isnan(push(NAN, 3, true)));
}

class DerivedTolerances : public ::testing::TestWithParam<std::string> {};

TEST_P(DerivedTolerances, HoldUnderEveryRoundingDirectionTheSpecsAllow) {
  const OpDef* op = find_op(GetParam());
  ASSERT_TRUE(op);
  for (DType t : op->dtypes) {
    double worst[4] = {0, 0, 0, 0};
    int cases = 0;
    // The default sweep, less the large case: four float32 emulations of 16M elements would take
    // a minute and test no rounding that the small cases do not.
    const Sweep sweep(*op, t, 200, 1);
    const std::string large = op->large_case().id();
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Case c = sweep.at(k);
      if (c.id() == large) continue;
      Expected e = prepare(c);
      if (!e.error.empty() || e.violation) continue;
      ++cases;
      const Inputs in(e.problem.inputs);
      for (int k = 0; k < 4; ++k) {
        const Direction& dir = kDirections[k];
        std::fesetround(dir.mode);
        Values v = emulate(op->name, e.problem, in, dir.up);
        std::fesetround(FE_TONEAREST);
        for (auto& [name, y] : v) {
          const Tensor& want = e.outputs.at(name);
          CompareReport r = compare(name, store(y, want.shape, t, dir.mode), want, e.tol, false);
          worst[k] = std::max(worst[k], r.worst);
          EXPECT_TRUE(r.ok()) << c.id() << " rounding " << dir.name << ": " << name << " " << r.mismatches
                              << " elements out of tolerance, first at " << r.first_bad << ": got " << r.first_got
                              << ", want " << r.first_want << ", allowed " << r.first_allowed;
        }
      }
    }
    std::printf("[ emulated ] %-12s %-8s %3d cases  worst/tol: nearest %.3g, upward %.3g, downward %.3g, toward-zero %.3g\n",
                op->name.c_str(), dtype_name(t).data(), cases, worst[0], worst[1], worst[2], worst[3]);
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const OpDef* op : all_ops()) v.push_back(op->name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, DerivedTolerances, ::testing::ValuesIn(op_names()), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
