#include "reference/q8ta_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/rng.h"
#include "reference/common.h"

namespace ts::q8ta {

double round_half_even(double v) {
  if (!std::isfinite(v)) return v;
  const double r = std::floor(v), f = v - r;  // exact: v and floor(v) share the binade or v < 1
  if (f > 0.5 || (f == 0.5 && std::fmod(r, 2.0) != 0)) return r + 1;
  return r;
}

int64_t requantize(double v, int64_t zp) {
  const double r = round_half_even(v) + double(zp);
  if (!(r > double(kMin))) return kMin;  // NaN never reaches here: the contract keeps values finite
  if (r > double(kMax)) return kMax;
  return int64_t(r);
}

double slack(double v, double d, int64_t zp) { return d > 0 ? double(requantize(v + d, zp) - requantize(v - d, zp)) : 0.0; }

bool is_pow2(double s) {
  int e;
  return std::isfinite(s) && s > 0 && std::frexp(s, &e) == 0.5;
}

bool normal_or_zero_f32(double x) {
  const double a = std::fabs(x);
  return a == 0 || (a >= 0x1p-126 && a < 0x1p128);
}

bool f32_exact(double x) { return std::isfinite(x) && double(float(x)) == x && normal_or_zero_f32(x); }

bool f32_sum_exact(double a, double b) {
  // Knuth's TwoSum (round to nearest, the reference's environment): err is what s = a + b lost.
  const double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
  return err == 0 && f32_exact(s);
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double scale_param(const Params& p, const char* key) {
  auto it = p.find(key);
  return it != p.end() && it->is_number() ? it->get<double>() : NAN;
}

int64_t zero_point_param(const Params& p, const char* key) { return p.at(key).get<int64_t>(); }

namespace {

// Any double in range: PyTorch and ONNX store scales as doubles (0.05), and kernels take
// float32(scale), a rounding the int8 bound counts (accumulator_term, add_requant).
bool valid_scale(double v) { return std::isfinite(v) && v >= kMinScale && v <= kMaxScale; }
const char* const kScaleRange = "a number in [2^-32, 2^32]";

}  // namespace

void require_scale(Contract& c, const Params& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end()) {
    c.require(false, "scales_valid", "params.", key, " is missing (", kScaleRange, ")");
  } else if (!it->is_number()) {
    c.require(false, "scales_valid", "params.", key, " (", it->dump(), ") must be ", kScaleRange);
  } else {
    const double v = it->get<double>();
    c.require(valid_scale(v), "scales_valid", "params.", key, " (", num(v), ") must be ", kScaleRange);
  }
}

void require_scale_values(Contract& c, const Tensor& t, const std::string& name) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (double v = t.get(i); !valid_scale(v)) {
      c.require(false, "scales_valid", name, "[", i, "] (", num(v), ") must be ", kScaleRange);
      return;
    }
}

void require_zero_point(Contract& c, const Params& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end()) {
    c.require(false, "zero_point_range", "params.", key, " is missing (an integer in [-128, 127])");
    return;
  }
  const bool integer = it->is_number_integer();
  const bool in_range = integer && (it->is_number_unsigned() ? it->get<uint64_t>() <= uint64_t(kMax)
                                                             : it->get<int64_t>() >= kMin && it->get<int64_t>() <= kMax);
  c.require(in_range, "zero_point_range", "params.", key, " (", it->dump(), ") must be an integer in [-128, 127]");
}

void require_dtype(Contract& c, const Problem& p, const std::string& name, DType want) {
  const DType got = p.inputs.at(name).dtype;
  c.require(got == want, "input_dtypes", name, " is ", dtype_name(got), " but must be ", dtype_name(want));
}

DType dtype_of(const Case& c, const std::string& name, DType dflt) {
  const std::string w = c.word(name + "_dtype", "");
  if (w.empty()) return dflt;
  auto t = parse_dtype(w);
  if (!t) throw UsageError(cat("case ", c.id(), ": unknown dtype '", w, "' for ", name));
  return *t;
}

Tensor int_tensor(DType t, Shape s, uint64_t seed, const std::string& name, int64_t lo, int64_t hi) {
  Tensor r(t, std::move(s));
  if (AllocationLimit::shapes_only()) return r;
  const Stream st(seed, name);
  const double n = double(hi - lo + 1);
  for (int64_t i = 0; i < r.numel(); ++i)
    r.set(i, double(std::min<int64_t>(hi, lo + int64_t(std::floor(st.unit(uint64_t(i)) * n)))));
  return r;
}

IntRange data_range(int64_t zp, int64_t range) {
  if (range >= 128) return {};
  const int64_t z = std::clamp(zp, kMin, kMax);
  return {std::max(kMin, z - range), std::min(kMax, z + range)};
}

double rms_about(IntRange r, int64_t zp) {
  const double n = double(r.hi - r.lo + 1), mean = 0.5 * double(r.lo + r.hi);
  return std::sqrt((n * n - 1) / 12 + (mean - double(zp)) * (mean - double(zp)));
}

double draw_scale(bool pow2, int e, uint64_t seed, const std::string& name, uint64_t i) {
  const double u = Stream(seed, name).unit(i);
  if (pow2) return std::ldexp(1.0, e + int(std::floor(u * 5)) - 2);
  return double(float(std::ldexp(1 + u, e)));
}

double decimal3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return std::strtod(buf, nullptr);
}

double output_scale_for(bool pow2, double typical, int64_t shift, uint64_t seed) {
  const double base = typical > 0 ? typical / 32 : 1;
  if (pow2) {
    const int64_t e = std::clamp<int64_t>(std::lround(std::log2(base)) + shift, -32, 32);
    return std::ldexp(1.0, int(e));
  }
  const double m = 0.75 + 0.75 * Stream(seed, "output_scale").unit(0);
  return double(float(std::clamp(std::ldexp(base * m, int(shift)), kMinScale, kMaxScale)));
}

std::vector<Var> common_vars() {
  return {word_var("scales", {"random", "pow2", "near", "decimal"}, "random",
                   "random: float32 scales with random mantissas; pow2: powers of two (every float32 operation "
                   "exact: outputs must match bit for bit, ties to even included); near: pow2 except "
                   "output_scale = 2^e (1 + 2^-22), which moves ties just off x.5, inside the float32 bound "
                   "(outputs there may differ by 1); decimal: random scales rounded to 3 significant decimal "
                   "digits (0.0473), as PyTorch and ONNX store them: not float32 values, rounded by the kernels"),
          int_var("out_zp", -1000, 1000, "0", "output_zero_point (outside [-128, 127]: invalid)"),
          int_var("range", 1, 128, "128",
                  "int8 inputs within `range` of their zero point, clamped to int8 (128: the whole int8 range)"),
          int_var("out_shift", -40, 24, "0",
                  "output_scale = typical |value| / 32 * 2^out_shift (negative: saturation, positive: fractions; "
                  "below about -26 the value before the clamp is past int32)")};
}

namespace {

// The int8 comparison bound of q8ta_linear and q8ta_conv2d (SPEC "Comparison and outcomes"; the rule
// itself in q8ta_common.h). Both kernels requantize an int32 accumulator the same way (q8ta_conv2d's
// im2col even through q8ta_linear's own tile code), so one derivation serves both.
//
// The kernel's requantization of out[m,n], in float32 (u = 2^-23, kUnitF32: one operation errs by
// at most u of its result, reference/common.h):
//   q = (float(acc) * input_scale * weight_scale[n] + bias[n]) * (1 / output_scale)
// in any association, contracted into fmas or not; 1 / output_scale either a host-rounded float32
// uniform (error <= u/2) or computed on the device (a division or reciprocal: 2.5 ulp <= 2.5 u).
// With p = acc * is * ws and b = bias, each term passes through at most:
//   p: the int32 -> float32 conversion (1 u, only for |acc| > 2^24), two products (2 u), the sum
//      (1 u), the scaling by 1 / output_scale (a reciprocal, 2.5 u, and a product, 1 u): 7.5 u;
//   b: the sum and the scaling: 4.5 u.
// Products of (1 + delta_i) with |delta_i| <= k_i u total at most gamma(sum k_i) (Higham, Lemma 3.1),
// so |q - v_exact| <= gamma_f32(7.5) (|p| + |b|) / os <= gamma_f32(8) (|p| + |b|) / os.
// The reference's v is float64: (acc * is) * ws + b, then / os, four roundings of 2^-53, which the
// factor 1 + 2^-20 covers (gamma_f32(8) 2^-20 is about 2^-40 of the terms, over 2^-51 of them).
// No intermediate overflows (scales in [2^-32, 2^32], |acc| < 2^31 (k_range), |b| <= 2^32: every product is
// below 2^127) and every nonzero product of acc and the scales is at least 2^-96 (normal); only the
// sum can cancel to a subnormal, which a device may flush: 2^-126 / os <= 2^-94, so 2^-80 more.
//
// Exact elements: when input_scale, weight_scale[n] and output_scale are powers of two, |acc| <=
// 2^24 (a float32 integer), every product of acc and any subset of {is, ws, 1/os} lies in the normal
// range (a power of two times a float32 integer: exact) and the one addition's exact result is a
// normal float32 (p + b, or its scaled form p/os + b/os), every operation the kernel may perform
// returns its exact result — whatever the order, contraction or rounding direction, since a
// correctly rounded operation (up or down) returns a representable exact result unchanged, and
// 1/os, a power of two, is exact on the host. Then q = v exactly, the reference's float64
// arithmetic is exact too (float32 values are float64 values), and d = 0: the output must equal
// the reference bit for bit, ties to even included. (A kernel that divides by output_scale on the
// device is exact here only if its division returns exact quotients; the multiplications by the
// host's 1/output_scale that the seed uses always do.)
bool exact(double acc, double is, double ws, double b, double os) {
  if (!is_pow2(is) || !is_pow2(ws) || !is_pow2(os) || std::fabs(acc) > 0x1p24 || !normal_or_zero_f32(b)) return false;
  const double inv = 1 / os, f[4] = {acc, is, ws, inv};
  for (int mask = 1; mask < 16; ++mask) {
    double prod = 1;
    for (int i = 0; i < 4; ++i)
      if (mask & (1 << i)) prod *= f[i];
    if (!normal_or_zero_f32(prod)) return false;
  }
  const double p = acc * is * ws;
  return normal_or_zero_f32(b * inv) && f32_sum_exact(p, b) && f32_exact((p + b) * inv);
}

}  // namespace

void accumulator_term(double acc, double is, double ws, double b, double os, double& v, double& d) {
  // Scales that are not float32 values (scales=decimal, a golden from PyTorch) reach the kernel
  // rounded to float32: input_scale and output_scale half an ulp each (weight_scales is a float32
  // tensor): u more on p, u/2 on b, so gamma_f32(9) in place of gamma_f32(8).
  static const double g8 = gamma_f32(8) * (1 + 0x1p-20), g9 = gamma_f32(9) * (1 + 0x1p-20);
  const double g = f32_exact(is) && f32_exact(os) ? g8 : g9;
  v = (acc * is * ws + b) / os;
  d = exact(acc, is, ws, b, os) ? 0.0 : g * (std::fabs(acc) * is * ws + std::fabs(b)) / os + 0x1p-80;
}

bool accumulator_inputs(Contract& c, const Problem& p, size_t rank) {
  if (!has_inputs(c, p, {"x", "weight", "weight_scales"})) return false;
  const bool bias = p.inputs.count("bias") > 0;
  require_rank(c, p, "x", rank);
  require_rank(c, p, "weight", rank);
  require_rank(c, p, "weight_scales", 1);
  if (bias) require_rank(c, p, "bias", 1);
  if (c.failed()) return false;
  require_dtype(c, p, "x", DType::i8);
  require_dtype(c, p, "weight", DType::i8);
  require_dtype(c, p, "weight_scales", DType::f32);
  if (bias) require_dtype(c, p, "bias", DType::f32);
  return true;
}

Problem accumulator_problem(const Case& c, const Shape& x, const Shape& weight, int64_t K, int64_t Ns, int64_t Nb) {
  const int64_t x_zp = c.get("x_zp", 0), range = c.get("range", 128), out_zp = c.get("out_zp", 0);
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  const IntRange xr = data_range(x_zp, range), wr = range >= 128 ? IntRange{} : IntRange{-range, range};
  p.inputs["x"] = int_tensor(dtype_of(c, "x", DType::i8), x, c.seed, "x", xr.lo, xr.hi);
  p.inputs["weight"] = int_tensor(dtype_of(c, "weight", DType::i8), weight, c.seed, "weight", wr.lo, wr.hi);
  const std::string mode = c.word("scales", "random"), bad = c.word("bad_value", "none");
  const bool pow2 = mode == "pow2" || mode == "near";
  double is = draw_scale(pow2, -8, c.seed, "input_scale", 0);
  auto ws_of = [&](int64_t n) { return draw_scale(pow2, -8, c.seed, "weight_scales", uint64_t(n)); };
  // A typical |acc * input_scale * weight_scale|: K terms of their rms size, signs independent.
  const double typical = std::sqrt(double(std::max<int64_t>(K, 1))) * rms_about(xr, x_zp) * rms_about(wr, 0) * is * 0x1p-8;
  double os = output_scale_for(pow2, typical, c.get("out_shift", 0), c.seed);
  if (mode == "near") os = double(float(os * (1 + 0x1p-22)));  // exactly representable: 23 mantissa bits
  if (mode == "decimal") is = decimal3(is), os = decimal3(os);
  Tensor ws(dtype_of(c, "weight_scales", DType::f32), {Ns});
  for (int64_t n = 0; n < Ns; ++n) ws.set(n, ws_of(n));
  if (c.word("bias", "yes") == "yes" || bad.starts_with("bias_")) {
    // Up to 32 output steps either way. In power-of-two modes an integer multiple of
    // input_scale * weight_scale, as a quantized model's int32 bias is: y stays a float32 value.
    Tensor b(dtype_of(c, "bias", DType::f32), {Nb});
    const Stream st(c.seed, "bias");
    for (int64_t n = 0; n < Nb; ++n) {
      const double steps = st.uniform(uint64_t(n), -32, 32);
      if (pow2) {
        const double unit = is * ws_of(n);
        b.set(n, std::clamp(std::round(steps * os / unit), -0x1p20, 0x1p20) * unit);
      } else {
        b.set(n, steps * os);
      }
    }
    if (bad == "bias_nan" && Nb) b.set(0, NAN);
    if (bad == "bias_huge" && Nb) b.set(0, 0x1p33);
    p.inputs["bias"] = std::move(b);
  }
  if (bad == "weight_scale_nan" && Ns) ws.set(0, NAN);
  if (bad == "weight_scale_huge" && Ns) ws.set(0, 0x1p33);
  if (bad == "input_scale_zero") is = 0;
  if (bad == "output_scale_negative") os = -os;
  p.inputs["weight_scales"] = std::move(ws);
  p.params["input_scale"] = is;
  p.params["input_zero_point"] = x_zp;
  p.params["output_scale"] = os;
  p.params["output_zero_point"] = out_zp;
  return p;
}

std::vector<Var> accumulator_vars(Var weight_dim, const std::string& channels) {
  std::vector<Var> v = {word_var("bias", {"yes", "no"}, "yes", "whether the optional bias is given"),
                        int_var("x_zp", -1000, 1000, "0", "input_zero_point (outside [-128, 127]: invalid)")};
  for (Var& c : common_vars()) v.push_back(std::move(c));
  v.push_back(word_var("bad_value",
                       {"none", "input_scale_zero", "output_scale_negative", "weight_scale_nan",
                        "weight_scale_huge", "bias_nan", "bias_huge"},
                       "none", "one invalid scale or bias value (scales_valid, bias_range)"));
  v.push_back(std::move(weight_dim));
  v.push_back(int_var("Ns", 0, kMaxDim, channels, "length of weight_scales"));
  v.push_back(int_var("Nb", 0, kMaxDim, channels, "length of bias"));
  return v;
}

Tensors int8_output(const std::string& output, const Shape& shape, const Requant& r) {
  Tensor out(DType::i8, shape);
  int8_t* o = reinterpret_cast<int8_t*>(out.bytes.data());
  for (size_t i = 0; i < r.v.size(); ++i) o[i] = int8_t(requantize(r.v[i], r.zp));
  Tensors t;
  t.emplace(output, std::move(out));
  return t;
}

Tolerance int8_tolerance(const std::string& output, const Shape& shape, const Requant& r) {
  auto elem = std::make_shared<Tensor>(DType::f64, shape);
  double* e = reinterpret_cast<double*>(elem->bytes.data());
  for (size_t i = 0; i < r.v.size(); ++i) e[i] = slack(r.v[i], r.d[i], r.zp);
  Tolerance tol;
  tol.elem[output] = std::move(elem);
  return tol;
}

namespace {

// The int8 tensors of each operator, whose layouts the classes name.
std::vector<std::string> int8_tensors(const std::string& op) {
  if (op == "q8ta_add") return {"a", "b", "out"};
  return {"x", "out"};
}

}  // namespace

std::vector<std::string> classes(const Expected& e) {
  std::vector<std::string> out;
  if (e.violation || !e.error.empty()) return out;
  const Case& c = e.c;
  const Problem& p = e.problem;
  const bool linear = c.op == "q8ta_linear", add = c.op == "q8ta_add";
  const Requant r = linear ? linear_requant(p) : add ? add_requant(p) : conv2d_requant(p);
  bool exact = true, tie = false, near = false, low = false, high = false;
  for (size_t i = 0; i < r.v.size(); ++i) {
    const double v = r.v[i], rounded = round_half_even(v) + double(r.zp);
    exact &= r.d[i] == 0;
    tie |= r.d[i] == 0 && v - std::floor(v) == 0.5;
    near |= slack(v, r.d[i], r.zp) > 0;
    low |= rounded < double(kMin);
    high |= rounded > double(kMax);
  }
  if (exact && !r.v.empty()) out.push_back("exact (power-of-two scales, bit for bit)");
  if (tie) out.push_back("ties to even (exact x.5)");
  if (near) out.push_back("near a rounding boundary (may differ by 1)");
  if (low) out.push_back("saturation low (clamped to -128)");
  if (high) out.push_back("saturation high (clamped to 127)");
  bool decimal = false;
  for (auto& [key, v] : p.params.items())
    decimal |= key.ends_with("scale") && v.is_number() && !f32_exact(v.get<double>());
  if (decimal) out.push_back("scales not float32 values (rounded by the kernels)");
  for (auto& [key, zp] : p.params.items())
    if (key.ends_with("zero_point") && zp.is_number_integer()) {
      if (zp.get<int64_t>() == kMin) out.push_back("zero point -128");
      if (zp.get<int64_t>() == kMax) out.push_back("zero point 127");
    }
  std::set<std::string> layouts;
  for (auto& t : int8_tensors(c.op)) layouts.insert(layout_name(p.layout(t)));
  for (auto& l : layouts) out.push_back("layout " + l);
  if (layouts.size() > 1) out.push_back("mixed layouts");
  if (linear) {
    const Shape& x = p.inputs.at("x").shape;
    const int64_t M = x[0], K = x[1], N = p.inputs.at("weight").shape[0];
    const std::string impl = p.params.value("impl", "auto");
    out.push_back(impl == "gemv" || (impl == "auto" && M == 1) ? "impl=gemv" : "impl=tiled");
    if (impl == "auto") out.push_back("impl=auto");
    if (M == 1) out.push_back("M=1");
    if (N == 1) out.push_back("N=1");
    if (K % 4 != 0) out.push_back("ragged K (K%4!=0)");
    if (K > 256) out.push_back("long K (K>256)");
    out.push_back(p.inputs.count("bias") ? "bias present" : "bias absent");
  } else if (add) {  // q8ta_conv2d adds its shape classes itself (q8ta_conv2d.cpp)
    const Shape& s = p.inputs.at("a").shape;
    out.push_back(cat("rank ", s.size()));
    if (s.back() % 4 != 0) out.push_back("ragged W (W%4!=0)");
    if (s.size() >= 3 && s[s.size() - 3] % 4 != 0) out.push_back("ragged C (C%4!=0)");
  }
  return out;
}

std::vector<std::string> expected_classes(const OpDef& op) {
  std::vector<std::string> out = {"exact (power-of-two scales, bit for bit)", "ties to even (exact x.5)",
                                  "near a rounding boundary (may differ by 1)", "saturation low (clamped to -128)",
                                  "saturation high (clamped to 127)", "zero point -128", "zero point 127",
                                  "mixed layouts", "scales not float32 values (rounded by the kernels)"};
  std::set<std::string> layouts;
  for (auto& t : int8_tensors(op.name))
    if (auto it = op.layouts.find(t); it != op.layouts.end()) layouts.insert(it->second.begin(), it->second.end());
  for (auto& l : layouts) out.push_back("layout " + l);
  if (op.name == "q8ta_linear") {
    for (const char* cls : {"impl=gemv", "impl=tiled", "impl=auto", "M=1", "N=1", "ragged K (K%4!=0)", "long K (K>256)",
                            "bias present", "bias absent"})
      out.push_back(cls);
  } else if (op.name == "q8ta_add") {
    for (const char* cls : {"rank 1", "rank 2", "rank 3", "rank 4", "ragged W (W%4!=0)", "ragged C (C%4!=0)"})
      out.push_back(cls);
  }
  return out;
}

}  // namespace ts::q8ta
