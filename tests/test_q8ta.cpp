// The int8 operators' references and contracts, checked against what can be derived by hand:
// power-of-two cases equal integer arithmetic (ties to even included), a linear with identity
// weights copies its input, q8ta_add is symmetric in (a, b) with their parameters swapped, tiled
// and GEMV are one function, every rule fires with its id and names its values, the packed-dim
// compatibility matrix is SPEC's, and the int8 comparison bound is nonzero only next to a rounding
// boundary and zero wherever the float32 arithmetic is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <map>
#include <tuple>

#include "core/compare.h"
#include "core/runner.h"
#include "reference/ops.h"
#include "reference/q8ta_common.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {

using q8ta::Requant;

// round_half_even(n / 2^s) in integer arithmetic (s >= 0).
int64_t shift_rne(int64_t n, int s) {
  const int64_t d = int64_t(1) << s;
  const int64_t r = ((n % d) + d) % d, q = (n - r) / d;  // floor division: n = q d + r, 0 <= r < d
  return 2 * r > d || (2 * r == d && (q & 1)) ? q + 1 : q;
}

int64_t clamp8(int64_t v) { return std::clamp<int64_t>(v, -128, 127); }

int log2_exact(double s) {
  int e;
  EXPECT_EQ(std::frexp(s, &e), 0.5) << s << " is not a power of two";
  return e - 1;
}

int64_t out_at(const Tensor& t, int64_t i) { return int64_t(t.get(i)); }

// Every element's tolerance (the int8 rule's slack).
std::vector<double> elems(const Tolerance& tol) {
  const Tensor* b = tol.bound("out");
  EXPECT_TRUE(b);
  return b ? b->values() : std::vector<double>{};
}

Case linear_case(int64_t M, int64_t K, int64_t N, uint64_t seed) {
  Case c{"q8ta_linear", {}, DType::i8, "buffer", seed};
  return c.set("M", M).set("K", K).set("N", N);
}

// With input_scale = 2^ei, weight_scales[n] = 2^en, output_scale = 2^eo and bias[n] = b_n 2^(ei+en)
// (b_n an integer), out = clamp(rne((acc + b_n) 2^(ei+en-eo)) + zp): integers and shifts alone.
TEST(Q8taLinear, PowerOfTwoScalesEqualIntegerArithmetic) {
  int ties = 0, cases = 0;
  for (uint64_t seed = 0; seed < 40; ++seed)
    for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1, 5, 3}, {3, 17, 4}, {2, 1, 1}, {4, 33, 2}, {6, 4, 8}}) {
      Case c = linear_case(M, K, N, seed).set("scales", "pow2");
      c.set("range", int64_t(seed % 3 == 0 ? 128 : 1 + seed % 4)).set("out_shift", int64_t(seed % 12) - 1);
      c.set("x_zp", int64_t(seed * 37 % 256) - 128).set("out_zp", int64_t(seed * 53 % 256) - 128);
      if (seed % 4 == 1) c.set("bias", "no");
      Expected e = prepare(c);
      ASSERT_TRUE(e.error.empty() && !e.violation) << c.id();
      const Problem& p = e.problem;
      const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight"), &ws = p.inputs.at("weight_scales");
      const int ei = log2_exact(p.params["input_scale"]), eo = log2_exact(p.params["output_scale"]);
      const int64_t xzp = p.params["input_zero_point"], ozp = p.params["output_zero_point"];
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          int64_t acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += (int64_t(x.get(m * K + k)) - xzp) * int64_t(w.get(n * K + k));
          const int en = log2_exact(ws.get(n));
          const double unit = std::ldexp(1.0, ei + en);
          const double bn = p.inputs.count("bias") ? p.inputs.at("bias").get(n) / unit : 0;
          ASSERT_EQ(bn, std::round(bn)) << c.id() << ": bias is not an integer multiple of input_scale * weight_scale";
          const int64_t num = acc + int64_t(bn), E = ei + en - eo;
          ties += E < 0 && ((num % (int64_t(1) << -E)) + (int64_t(1) << -E)) % (int64_t(1) << -E) == int64_t(1) << (-E - 1);
          const int64_t want = clamp8((E >= 0 ? num * (int64_t(1) << E) : shift_rne(num, int(-E))) + ozp);
          EXPECT_EQ(out_at(e.outputs.at("out"), m * N + n), want) << c.id() << " at [" << m << "," << n << "]";
        }
      for (double s : elems(e.tol)) EXPECT_EQ(s, 0) << c.id() << ": a power-of-two case must match bit for bit";
      ++cases;
    }
  EXPECT_GT(ties, 100) << "the power-of-two cases should hold many exact ties";
  std::printf("[ q8ta     ] %d power-of-two linear cases, %d exact ties, all equal to integer arithmetic\n", cases, ties);
}

TEST(Q8taAdd, PowerOfTwoScalesEqualIntegerArithmetic) {
  int ties = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Case c{"q8ta_add", {}, DType::i8, seed % 2 ? "int8_4w" : "int8_4w4c", seed};
    c.set("shape", seed % 3 ? "3:5:7" : "2:9").set("scales", "pow2").set("out_shift", int64_t(seed % 7) - 3);
    c.set("a_zp", int64_t(seed * 37 % 256) - 128).set("b_zp", int64_t(seed * 11 % 256) - 128);
    c.set("out_zp", int64_t(seed * 53 % 256) - 128);
    if (seed % 5 == 0) c.set("range", int64_t(2));
    Expected e = prepare(c);
    ASSERT_TRUE(e.error.empty() && !e.violation) << c.id();
    const Problem& p = e.problem;
    const int ea = log2_exact(p.params["a_scale"]), eb = log2_exact(p.params["b_scale"]), eo = log2_exact(p.params["output_scale"]);
    const int64_t azp = p.params["a_zero_point"], bzp = p.params["b_zero_point"], ozp = p.params["output_zero_point"];
    const int s = std::max({0, eo - ea, eo - eb});  // num / 2^s is the exact value before rounding
    for (int64_t i = 0; i < p.inputs.at("a").numel(); ++i) {
      const int64_t da = int64_t(p.inputs.at("a").get(i)) - azp, db = int64_t(p.inputs.at("b").get(i)) - bzp;
      const int64_t num = da * (int64_t(1) << (ea - eo + s)) + db * (int64_t(1) << (eb - eo + s));
      ties += s > 0 && ((num % (int64_t(1) << s)) + (int64_t(1) << s)) % (int64_t(1) << s) == int64_t(1) << (s - 1);
      EXPECT_EQ(out_at(e.outputs.at("out"), i), clamp8(shift_rne(num, s) + ozp)) << c.id() << " at " << i;
    }
    for (double v : elems(e.tol)) EXPECT_EQ(v, 0) << c.id();
  }
  EXPECT_GT(ties, 100);
}

// weight = identity, unit scales, no bias: out = clamp(x - x_zp + out_zp). With input_scale 1/2 the
// values are halves: every odd (x - x_zp) is a tie, which goes to the even neighbour.
TEST(Q8taLinear, IdentityWeightCopiesTheInput) {
  const int64_t M = 3, K = 6;
  Problem p;
  p.dtype = DType::i8;
  Tensor x(DType::i8, {M, K}), w(DType::i8, {K, K}), ws(DType::f32, {K});
  for (int64_t i = 0; i < M * K; ++i) x.set(i, double((i * 53) % 256 - 128));
  for (int64_t k = 0; k < K; ++k) w.set(k * K + k, 1), ws.set(k, 1);
  p.inputs = {{"x", x}, {"weight", w}, {"weight_scales", ws}};
  for (double is : {1.0, 0.5})
    for (int64_t xzp : {0, 3, -128})
      for (int64_t ozp : {0, -7, 127}) {
        p.params = {{"input_scale", is}, {"input_zero_point", xzp}, {"output_scale", 1.0}, {"output_zero_point", ozp}};
        ASSERT_FALSE(named_op("q8ta_linear").validate(p));
        const Tensor out = named_op("q8ta_linear").reference(p).at("out");
        for (int64_t i = 0; i < M * K; ++i) {
          const int64_t d = int64_t(x.get(i)) - xzp;
          const int64_t half = is == 1.0 ? d : shift_rne(d, 1);
          EXPECT_EQ(out_at(out, i), clamp8(half + ozp)) << "x " << x.get(i) << " scale " << is << " zps " << xzp << " " << ozp;
        }
        for (double v : elems(named_op("q8ta_linear").tolerance(p))) EXPECT_EQ(v, 0);
      }
}

// Swapping a and b together with their scales and zero points changes nothing, bit for bit.
TEST(Q8taAdd, SymmetricInAAndBWithTheirParameters) {
  int cases = 0;
  for (uint64_t k = 0; k < 200; ++k) {
    const Case c = draw_case(named_op("q8ta_add"), DType::i8, true, k, int(k % 100));
    Expected e = prepare(c);
    if (!e.error.empty() || e.violation) continue;
    Problem q = e.problem;
    std::swap(q.inputs.at("a"), q.inputs.at("b"));
    std::swap(q.params["a_scale"], q.params["b_scale"]);
    std::swap(q.params["a_zero_point"], q.params["b_zero_point"]);
    ASSERT_FALSE(named_op("q8ta_add").validate(q)) << c.id();
    EXPECT_EQ(named_op("q8ta_add").reference(q).at("out").bytes, e.outputs.at("out").bytes) << c.id();
    EXPECT_EQ(elems(named_op("q8ta_add").tolerance(q)), elems(e.tol)) << c.id();
    ++cases;
  }
  EXPECT_GT(cases, 100);
}

// impl selects a kernel, not a function: at M = 1 tiled, GEMV and auto have one reference and one
// tolerance; at M > 1 tiled and auto do.
TEST(Q8taLinear, TiledAndGemvAreOneFunction) {
  for (uint64_t seed = 0; seed < 20; ++seed)
    for (int64_t M : {1, 5}) {
      const int64_t K = 1 + int64_t(seed * 7 % 40), N = 1 + int64_t(seed % 6);
      std::vector<std::string> impls = {"tiled", "auto"};
      if (M == 1) impls.push_back("gemv");
      Expected first;
      for (auto& impl : impls) {
        Case c = linear_case(M, K, N, seed).set("impl", impl);
        if (seed % 2) c.set("scales", "pow2");
        Expected e = prepare(c);
        ASSERT_TRUE(e.error.empty() && !e.violation) << c.id();
        if (impl == impls.front()) {
          first = e;
          continue;
        }
        EXPECT_EQ(e.outputs.at("out").bytes, first.outputs.at("out").bytes) << c.id();
        EXPECT_EQ(elems(e.tol), elems(first.tol)) << c.id();
      }
    }
}

// The bound is nonzero only where v lies within d of a rounding boundary k + 1/2 (and the clamp
// does not hide it); random scales put few elements there, scales=near puts the former ties there.
TEST(Q8taTolerance, SlackOnlyNextToARoundingBoundary) {
  int near = 0, elements = 0;
  for (uint64_t seed = 0; seed < 30; ++seed)
    for (const char* scales : {"random", "near"}) {
      Case c = linear_case(3, 6, 5, seed).set("scales", scales).set("range", 2).set("out_shift", 6);
      Expected e = prepare(c);
      ASSERT_TRUE(e.error.empty() && !e.violation);
      const Requant r = q8ta::linear_requant(e.problem);
      const std::vector<double> s = elems(e.tol);
      for (size_t i = 0; i < r.v.size(); ++i) {
        ++elements;
        const double frac = r.v[i] - std::floor(r.v[i]);
        EXPECT_GT(r.d[i], 0) << c.id() << ": a scale is not a power of two, nothing is exact";
        EXPECT_LT(r.d[i], 1e-3) << c.id();
        if (s[i] == 0) continue;
        ++near;
        EXPECT_EQ(s[i], 1) << c.id();
        EXPECT_LE(std::fabs(frac - 0.5), r.d[i]) << c.id() << " element " << i << ": v " << r.v[i];
      }
    }
  EXPECT_GT(near, 10) << "scales=near should put elements within the bound of x.5";
  std::printf("[ q8ta     ] %d of %d elements may differ by 1 (within the float32 bound of x.5)\n", near, elements);
}

TEST(Q8taTolerance, SlackArithmetic) {
  EXPECT_EQ(q8ta::round_half_even(2.5), 2);
  EXPECT_EQ(q8ta::round_half_even(3.5), 4);
  EXPECT_EQ(q8ta::round_half_even(-2.5), -2);
  EXPECT_EQ(q8ta::round_half_even(-3.5), -4);
  EXPECT_EQ(q8ta::round_half_even(-0.5), 0);
  EXPECT_EQ(q8ta::slack(2.5, 0, 0), 0);             // exact: no slack, even at a tie
  EXPECT_EQ(q8ta::slack(2.4999, 1e-3, 0), 1);       // within d of 2.5
  EXPECT_EQ(q8ta::slack(2.49, 1e-3, 0), 0);
  EXPECT_EQ(q8ta::slack(300.5, 1e-3, 0), 0);        // clamped either way
  EXPECT_EQ(q8ta::slack(126.5, 1e-3, 0), 1);        // 126 or 127
  EXPECT_EQ(q8ta::slack(127.5, 1e-3, 0), 0);        // 127 either way
  EXPECT_EQ(q8ta::slack(-128.5, 1e-3, 0), 0);
  EXPECT_EQ(q8ta::requantize(2.5, 1), 3);           // rounded first, then the zero point
}

// The comparison applies it: off by one passes only where the slack is 1, never at an exact
// element, and off by two never.
TEST(Q8taTolerance, CompareHoldsExactElementsToEquality) {
  Expected e = prepare(linear_case(3, 6, 5, 4).set("scales", "near").set("range", 2).set("out_shift", 6));
  const Tensor& want = e.outputs.at("out");
  const std::vector<double> s = elems(e.tol);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const int64_t w = out_at(want, i), step = w < 127 ? 1 : -1;
    Tensor got = want;
    got.set(i, double(w + step));
    EXPECT_EQ(compare("out", got, want, e.tol, true).ok(), s[size_t(i)] >= 1) << i;
    if (w + 2 * step >= -128 && w + 2 * step <= 127) {
      got.set(i, double(w + 2 * step));
      EXPECT_FALSE(compare("out", got, want, e.tol, true).ok()) << i;
    }
  }
}

// Kernels that round half away from zero, or add the zero point before rounding, agree with the
// reference everywhere but at ties: the exact edge cases catch both.
TEST(Q8taTolerance, ExactCasesCatchWrongTieRounding) {
  for (const OpDef* op : {&named_op("q8ta_linear"), &named_op("q8ta_add")}) {
    int away = 0, zp_first = 0;
    for (const Case& c : op->edge_cases(DType::i8)) {
      Expected e = prepare(c);
      if (e.violation) continue;
      const Requant r = c.op == "q8ta_linear" ? q8ta::linear_requant(e.problem) : q8ta::add_requant(e.problem);
      Tensor a = e.outputs.at("out"), z = a;
      for (size_t i = 0; i < r.v.size(); ++i) {
        a.set(int64_t(i), double(clamp8(int64_t(std::round(r.v[i])) + r.zp)));
        z.set(int64_t(i), double(clamp8(int64_t(q8ta::round_half_even(r.v[i] + double(r.zp))))));
      }
      away += !compare("out", a, e.outputs.at("out"), e.tol, true).ok();
      zp_first += !compare("out", z, e.outputs.at("out"), e.tol, true).ok();
    }
    EXPECT_GT(away, 0) << op->name << ": no edge case catches rounding half away from zero";
    EXPECT_GT(zp_first, 0) << op->name << ": no edge case catches the zero point added before rounding";
  }
}

// The derivation itself, element by element: the float32 value q of the requantization, evaluated
// in several orders the bound allows (products in either association, an fma, the host's
// reciprocal or a device division / reciprocal pushed one ulp further), under all four rounding
// directions, lies within d of the reference's v — and equals v exactly where d = 0, for every
// order that multiplies by the host's reciprocal.
struct Variant {
  const char* name;
  bool host_reciprocal;  // exactness is claimed only for these
};
const Variant kVariants[] = {{"(acc*is)*ws+b, *inv", true}, {"acc*(is*ws)+b, *inv", true}, {"fma(acc,is*ws,b)*inv", true},
                             {"(acc*is)*ws+b, /os pushed", false}, {"(acc*ws)*is+b, *rcp(os) pushed", false}};

float push1(float v, bool up) { return std::nextafter(v, up ? INFINITY : -INFINITY); }

// One linear element in variant k; the current rounding direction applies to every float32 step.
__attribute__((noinline)) float linear_q(int k, int64_t acc, float is, float ws, float b, float os, bool up) {
  const float a = float(acc), inv = float(1.0 / double(os));
  switch (k) {
    case 0: return ((a * is) * ws + b) * inv;
    case 1: return (a * (is * ws) + b) * inv;
    case 2: return std::fma(a, is * ws, b) * inv;
    case 3: return push1(((a * is) * ws + b) / os, up);
    default: return ((a * ws) * is + b) * push1(1.0f / os, up);
  }
}

__attribute__((noinline)) float add_q(int k, int64_t da, int64_t db, float as, float bs, float os, bool up) {
  const float a = float(da), b = float(db), inv = float(1.0 / double(os));
  switch (k) {
    case 0: return (as * a + bs * b) * inv;
    case 1: return a * float(double(as) / double(os)) + b * float(double(bs) / double(os));  // ratios folded on the host
    case 2: return std::fma(as, a, bs * b) * inv;
    case 3: return push1((as * a + bs * b) / os, up);
    default: return (as * a + bs * b) * push1(1.0f / os, up);
  }
}

TEST(Q8taTolerance, BoundHoldsForFloat32RequantizationInEveryOrderAndDirection) {
  const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (const OpDef* op : {&named_op("q8ta_linear"), &named_op("q8ta_add")}) {
    const bool linear = op == &named_op("q8ta_linear");
    double worst = 0;
    int64_t elements = 0, exact = 0;
    std::vector<Case> cases = op->edge_cases(DType::i8);
    for (uint64_t k = 0; k < 150; ++k) cases.push_back(draw_case(*op, DType::i8, true, 1000 + k, int(k % 100)));
    for (const Case& c : cases) {
      Expected e = prepare(c);
      if (!e.error.empty() || e.violation) continue;
      const Problem& p = e.problem;
      const Requant r = linear ? q8ta::linear_requant(p) : q8ta::add_requant(p);
      // The integer parts, recomputed here.
      std::vector<int64_t> ia, ib;
      std::vector<float> sa, sb;  // per element: the scale of each term (linear: is and ws[n]; add: as and bs)
      std::vector<float> bias;
      float os = float(double(p.params["output_scale"]));
      if (linear) {
        const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight"), &ws = p.inputs.at("weight_scales");
        const int64_t M = x.shape[0], K = x.shape[1], N = w.shape[0], xzp = p.params["input_zero_point"];
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            int64_t acc = 0;
            for (int64_t kk = 0; kk < K; ++kk) acc += (int64_t(x.get(m * K + kk)) - xzp) * int64_t(w.get(n * K + kk));
            ia.push_back(acc);
            sa.push_back(float(double(p.params["input_scale"])));
            sb.push_back(float(ws.get(n)));
            bias.push_back(p.inputs.count("bias") ? float(p.inputs.at("bias").get(n)) : 0.0f);
          }
      } else {
        const int64_t azp = p.params["a_zero_point"], bzp = p.params["b_zero_point"];
        for (int64_t i = 0; i < p.inputs.at("a").numel(); ++i) {
          ia.push_back(int64_t(p.inputs.at("a").get(i)) - azp);
          ib.push_back(int64_t(p.inputs.at("b").get(i)) - bzp);
          sa.push_back(float(double(p.params["a_scale"])));
          sb.push_back(float(double(p.params["b_scale"])));
        }
      }
      for (size_t i = 0; i < r.v.size(); ++i) {
        ++elements;
        exact += r.d[i] == 0;
        for (int mode : modes)
          for (int k = 0; k < 5; ++k) {
            const bool up = mode != FE_DOWNWARD && mode != FE_TOWARDZERO;
            std::fesetround(mode);
            const float q = linear ? linear_q(k, ia[i], sa[i], sb[i], bias[i], os, up) : add_q(k, ia[i], ib[i], sa[i], sb[i], os, up);
            std::fesetround(FE_TONEAREST);
            const double err = std::fabs(double(q) - r.v[i]);
            if (r.d[i] == 0) {
              if (kVariants[k].host_reciprocal) {
                ASSERT_EQ(double(q), r.v[i]) << c.id() << " element " << i << " " << kVariants[k].name;
              }
              continue;
            }
            worst = std::max(worst, err / r.d[i]);
            ASSERT_LE(err, r.d[i]) << c.id() << " element " << i << " " << kVariants[k].name << " mode " << mode;
          }
      }
    }
    std::printf("[ q8ta     ] %s: %lld elements (%lld exact) x 5 orders x 4 directions, worst |q - v| / d = %.3g\n",
                op->name.c_str(), (long long)elements, (long long)exact, worst);
    EXPECT_GT(exact, 0);
    EXPECT_LT(exact, elements);
  }
}

// ---- Contracts ----

std::optional<Violation> verdict(const Case& c) { return prepare(c).violation; }

TEST(Q8taRules, EachRuleFiresWithItsIdAndNamesTheValues) {
  auto fires = [](const Case& c, const std::string& rule, const std::string& text) {
    auto v = verdict(c);
    ASSERT_TRUE(v) << c.id() << " should break " << rule;
    EXPECT_EQ(v->rule, rule) << c.id() << ": " << v->message;
    EXPECT_NE(v->message.find(text), std::string::npos) << v->message;
    EXPECT_NE(v->message.find("[" + rule + "]"), std::string::npos) << v->message;
  };
  const Case lin = linear_case(2, 4, 3, 1);
  fires(Case(lin).set("M", 0), "dims_positive", "M (0)");
  fires(Case(lin).set("K", 0), "k_range", "K (0)");
  fires(Case(lin).set("K", 65537), "k_range", "K (65537)");
  fires(Case(lin).set("Kw", 5), "weight_k_match", "[3,5]");
  fires(Case(lin).set("Ns", 4), "scales_shape", "[4]");
  fires(Case(lin).set("Nb", 2), "bias_shape", "[2]");
  fires(Case(lin).set("weight_dtype", "int32"), "input_dtypes", "weight is int32");
  fires(Case(lin).set("bias_dtype", "float16"), "input_dtypes", "bias is float16");
  fires(Case(lin).set("bad_value", "output_scale_negative"), "scales_valid", "output_scale (-");
  fires(Case(lin).set("bad_value", "input_scale_zero"), "scales_valid", "input_scale (0)");
  fires(Case(lin).set("bad_value", "weight_scale_nan"), "scales_valid", "weight_scales[0] (nan)");
  // A scale as PyTorch and ONNX store it (a double, 0.05) is valid: kernels round it to float32.
  EXPECT_FALSE(verdict(Case(lin).set("scales", "decimal")));
  fires(Case(lin).set("x_zp", 128), "zero_point_range", "input_zero_point (128)");
  fires(Case(lin).set("out_zp", -129), "zero_point_range", "output_zero_point (-129)");
  fires(Case(lin).set("bad_value", "bias_huge"), "bias_range", "bias[0] (8589934592)");
  fires(Case(lin).set("impl", "gemv"), "gemv_requires_m_1", "M (2)");
  EXPECT_FALSE(verdict(linear_case(1, 4, 3, 1).set("impl", "gemv")));

  const Case add = Case{"q8ta_add", {}, DType::i8, "int8_4w", 1}.set("shape", "3:5");
  fires(Case(add).set("shape", "1:1:1:2:3"), "input_rank", "rank 1 to 4, got [1,1,1,2,3]");
  fires(Case(add).set("bshape", "3:4"), "shapes_match", "b [3,4] must have a's shape [3,5]");
  fires(Case(add).set("a_dtype", "float32"), "input_dtypes", "a is float32");
  fires(Case(add).set("bad_value", "b_scale_negative"), "scales_valid", "b_scale (-");
  fires(Case(add).set("bad_value", "output_scale_huge"), "scales_valid", "output_scale (8589934592)");
  fires(Case(add).set("a_zp", 300), "zero_point_range", "a_zero_point (300)");
}

// What only a golden's inputs and params can break (no case id can): ranks, a missing or malformed
// parameter, an implementation that does not exist.
TEST(Q8taRules, GoldenOnlyInputsAreRejectedToo) {
  const Problem base = named_op("q8ta_linear").make(linear_case(2, 4, 3, 1));
  auto rule_of = [](const Problem& p) {
    auto v = named_op("q8ta_linear").validate(p);
    return v ? v->rule + ": " + v->message : std::string("valid");
  };
  Problem p = base;
  p.inputs.at("x").shape = {1, 2, 4};
  EXPECT_EQ(rule_of(p).rfind("input_rank", 0), 0u) << rule_of(p);
  p = base;
  p.params.erase("output_scale");
  EXPECT_EQ(rule_of(p).rfind("scales_valid: q8ta_linear: params.output_scale is missing", 0), 0u) << rule_of(p);
  p = base;
  p.params["input_scale"] = 0x1p-33;  // below the range
  EXPECT_EQ(rule_of(p).rfind("scales_valid: q8ta_linear: params.input_scale (1.1641532182693481e-10) must be a number in [2^-32, 2^32]", 0), 0u) << rule_of(p);
  p.params["input_scale"] = 0.1;  // a double, as PyTorch stores it: kernels round it to float32
  EXPECT_EQ(rule_of(p), "valid");
  p = base;
  p.params["output_zero_point"] = 1.5;
  EXPECT_EQ(rule_of(p).rfind("zero_point_range", 0), 0u) << rule_of(p);
  p = base;
  p.params["impl"] = "fast";
  EXPECT_EQ(rule_of(p).rfind("params_valid", 0), 0u) << rule_of(p);
  p = base;
  p.inputs.erase("bias");
  EXPECT_EQ(rule_of(p), "valid");  // the bias is optional
}

// SPEC: int8_4w4c and int8_4c1w are compatible with each other (C, block 4), int8_4w with neither
// (W, block 4); a plain buffer (logical order, W in blocks of 1) only with itself.
TEST(Q8taRules, PackedDimCompatibilityMatrix) {
  const std::map<std::string, int> group = {{"buffer", 0}, {"int8_4w", 1}, {"int8_4c1w", 2}, {"int8_4w4c", 2}};
  int valid = 0;
  for (auto& [a, ga] : group)
    for (auto& [b, gb] : group)
      for (auto& [o, go] : group) {
        Case c{"q8ta_add", {}, DType::i8, a + ";b=" + b + ";out=" + o, 3};
        c.set("shape", "2:5:3:6");
        auto v = verdict(c);
        const bool ok = ga == gb && gb == go;
        valid += ok;
        EXPECT_EQ(!v, ok) << c.storage << ": " << (v ? v->message : "valid");
        if (v) {
          EXPECT_EQ(v->rule, "packed_dim_compatible");
          EXPECT_NE(v->message.find("a " + a), std::string::npos) << v->message;
          EXPECT_NE(v->message.find("b " + b), std::string::npos) << v->message;
          EXPECT_NE(v->message.find("out " + o), std::string::npos) << v->message;
        }
      }
  EXPECT_EQ(valid, 1 + 1 + 8);
  EXPECT_FALSE(verdict(Case{"q8ta_add", {}, DType::i8, "int8_4w4c;b=int8_4c1w;out=int8_4c1w", 3}.set("shape", "2:7:3:5")));
}

// A layout an operator does not declare for a tensor is a usage error, before any rule.
TEST(Q8taRules, UndeclaredLayoutsAreUsageErrors) {
  EXPECT_THROW(parse_case("q8ta_linear/M=1,K=4,N=2/int8/buffer;x=int8_4c1w/seed=1"), UsageError);
  EXPECT_THROW(parse_case("q8ta_linear/M=1,K=4,N=2/int8/buffer;weight=int8_4w/seed=1"), UsageError);
  EXPECT_THROW(parse_case("q8ta_add/shape=4/int8/texture3d_w/seed=1"), UsageError);
  EXPECT_THROW(parse_case("q8ta_add/shape=4/float32/int8_4w/seed=1"), UsageError);
  EXPECT_NO_THROW(parse_case("q8ta_linear/M=1,K=4,N=2,impl=gemv/int8/buffer;x=int8_4w;out=int8_4w/seed=1"));
}

// The sweep's invalid cases break exactly the rules listed, and every listed rule is reached.
TEST(Q8taRules, GeneratorsBreakEveryRule) {
  for (const OpDef* op : {&named_op("q8ta_linear"), &named_op("q8ta_add")}) {
    std::map<std::string, int> hits;
    for (uint64_t k = 0; k < 300; ++k) {
      const Case c = draw_case(*op, DType::i8, false, k, int(k % 100));
      auto v = verdict(c);
      ASSERT_TRUE(v) << c.id() << " is valid";
      hits[v->rule]++;
    }
    for (auto& r : op->rules) {
      if (op->name == "q8ta_linear" && r.id == "input_rank") continue;  // ids cannot change a rank
      EXPECT_GT(hits[r.id], 0) << op->name << " " << r.id;
    }
    for (auto& [rule, n] : hits)
      EXPECT_TRUE(std::any_of(op->rules.begin(), op->rules.end(), [&](const Rule& r) { return r.id == rule; }))
          << op->name << " generated unlisted rule " << rule;
  }
}

}  // namespace
}  // namespace ts
