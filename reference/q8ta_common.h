#pragma once
// What the int8 operators (q8ta_linear, q8ta_conv2d, q8ta_add) share: int8 input data, quantization parameters
// and their rules, the requantization out = clamp(rne(v) + zp, -128, 127) of a float64 value v,
// the int8 comparison rule of SPEC "Comparison and outcomes" and the q8ta coverage classes.
//
// The int8 comparison rule. A kernel requantizes in float32; the reference computes v (the value
// before rounding) in float64. Each operator bounds, element by element, how far the kernel's
// float32 value q may lie from v: |q - v| <= d (the derivations are beside each operator). The
// kernel's output is then one of requantize(v') for v' in [v - d, v + d], and since requantize is
// monotone, it lies between requantize(v - d) and requantize(v + d). The per-element tolerance of
// an int8 output is their difference, `slack`: 0 unless v lies within d of a rounding boundary
// (k + 1/2) that the clamp does not hide, 1 there (d < 1/2). Elements whose every float32 operation
// is exact (power-of-two scales, core of `exact` below) have d = 0: the kernel's q equals v, so the
// output must match bit for bit, ties to even included.
#include <cstdint>
#include <string>
#include <vector>

#include "core/contract.h"
#include "core/op.h"
#include "core/runner.h"

namespace ts::q8ta {

constexpr int64_t kMin = -128, kMax = 127;

// Round half to even, whatever the floating-point environment's rounding direction.
double round_half_even(double v);

// clamp(round_half_even(v) + zp, -128, 127).
int64_t requantize(double v, int64_t zp);

// How many int8 steps the kernel's output may differ from requantize(v, zp) when its float32 value
// lies within d of v: requantize(v + d, zp) - requantize(v - d, zp).
double slack(double v, double d, int64_t zp);

bool is_pow2(double s);              // a positive power of two
bool normal_or_zero_f32(double x);   // 0, or a magnitude in float32's normal range [2^-126, 2^128)
// x is a float32 value (exactly) that no device flushes: 0 or normal.
bool f32_exact(double x);
// a + b is computed exactly in float32: the exact sum is a float32 value, 0 or normal.
bool f32_sum_exact(double a, double b);

// Scales are numbers in [2^-32, 2^32] (the kernels round them to float32, which stays in range: the
// ends are float32 values), biases finite with magnitude at most 2^32: then no
// float32 intermediate of either kernel (integers up to 2^31 times three scales, or a bias times
// 1/output_scale) overflows, and none of a product chain is subnormal (derivations in the op files).
constexpr double kMinScale = 0x1p-32, kMaxScale = 0x1p32, kMaxBias = 0x1p32;

// A scale parameter as validated (rule scales_valid); NaN if it is not a number.
double scale_param(const Params& p, const char* key);
int64_t zero_point_param(const Params& p, const char* key);  // as validated (zero_point_range)

void require_scale(Contract& c, const Params& p, const char* key);
void require_scale_values(Contract& c, const Tensor& t, const std::string& name);
void require_zero_point(Contract& c, const Params& p, const char* key);
// Rule input_dtypes: `name` has dtype `want`.
void require_dtype(Contract& c, const Problem& p, const std::string& name, DType want);

// "%.9g": enough digits to tell a float32 value from its neighbours in a message.
std::string num(double v);

// ---- Case data (make) ----

// An input's dtype: `dflt` unless the id overrides it with <name>_dtype=... (an invalid case).
DType dtype_of(const Case& c, const std::string& name, DType dflt);

// Integers in [lo, hi], uniform, element i from the counter-based stream of (seed, name) (core/rng.h):
// lo + floor(unit * (hi - lo + 1)), stored in `t` (int8 unless an id overrides the dtype).
Tensor int_tensor(DType t, Shape s, uint64_t seed, const std::string& name, int64_t lo, int64_t hi);

// The values an int8 input is drawn from: within `range` of its zero point (clamped to int8), or
// the whole int8 range when range >= 128.
struct IntRange {
  int64_t lo = kMin, hi = kMax;
};
IntRange data_range(int64_t zp, int64_t range);
// Root mean square of (x - zp) over x uniform in r: the typical size of one term.
double rms_about(IntRange r, int64_t zp);

// A scale near 2^e: power-of-two mode 2^(e + j) with j in [-2, 2]; else 2^e * m with m uniform in
// [1, 2), rounded to float32. Element i of the stream (seed, name).
double draw_scale(bool pow2, int e, uint64_t seed, const std::string& name, uint64_t i);
// The output scale that puts a typical |value| (`typical`, before dividing by the output scale) at
// about 32 int8 steps, times 2^shift (negative shifts saturate), in power-of-two or random mode,
// kept inside [2^-32, 2^32].
double output_scale_for(bool pow2, double typical, int64_t shift, uint64_t seed);
// x rounded to 3 significant decimal digits (scales=decimal: a scale as PyTorch and ONNX store it).
double decimal3(double x);

// The variables every q8ta operator's ids share.
std::vector<Var> common_vars();

// ---- Operators that requantize an int32 accumulator (q8ta_linear, q8ta_conv2d) ----
// out = clamp(rne((acc * input_scale * weight_scales[n] + bias[n]) / output_scale) + out_zp, ...).

// The inputs of such a case (make), from the stream of the case's seed: x and weight of these
// shapes, int8 around x_zp within the id's range; input_scale, weight_scales [Ns], bias [Nb] (when
// the id asks for one), output_scale chosen for a reduction of K terms; the zero points x_zp and
// out_zp, and the id's bad_value.
Problem accumulator_problem(const Case& c, const Shape& x, const Shape& weight, int64_t K, int64_t Ns, int64_t Nb);
// The id variables of such an operator: bias, x_zp, common_vars(), bad_value (one invalid scale or
// bias value), then the invalid cases' overrides: `weight_dim` (weight's reduction dimension), and
// Ns and Nb, the lengths of weight_scales and bias, which default to `channels`.
std::vector<Var> accumulator_vars(Var weight_dim, const std::string& channels);
// Its inputs' presence, ranks and dtypes (rules input_rank, input_dtypes): x and weight int8 of
// `rank`, weight_scales float32 of rank 1, the optional bias float32 of rank 1. False when the
// shapes cannot be read further (an input missing or of the wrong rank).
bool accumulator_inputs(Contract& c, const Problem& p, size_t rank);
// The float64 value v = (acc * is * ws + b) / os before rounding, and the bound d of the kernels'
// float32 requantization of it (0 where every float32 operation is exact: derivation beside it).
void accumulator_term(double acc, double is, double ws, double b, double os, double& v, double& d);

// ---- Coverage (gpu/plans/coverage.cpp) ----

// The float64 values before rounding, their float32 bounds d, and the output zero point of a valid
// problem, element by element in output order.
struct Requant {
  std::vector<double> v, d;
  int64_t zp = 0;
};
Requant linear_requant(const Problem& p);  // q8ta_linear.cpp
Requant add_requant(const Problem& p);     // q8ta_add.cpp
Requant conv2d_requant(const Problem& p);  // q8ta_conv2d.cpp

// The reference's int8 output from its requantization terms: requantize(v, zp) element by element.
Tensors int8_output(const std::string& output, const Shape& shape, const Requant& r);
// The tolerance of an int8 output from its requantization terms: elem = slack(v, d, zp).
Tolerance int8_tolerance(const std::string& output, const Shape& shape, const Requant& r);

// Classes of a valid q8ta case (and of an invalid one: nothing beyond what coverage.cpp adds).
std::vector<std::string> classes(const Expected& e);
// The classes a q8ta operator's sweep is expected to reach.
std::vector<std::string> expected_classes(const OpDef& op);

}  // namespace ts::q8ta
