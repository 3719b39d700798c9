#include "core/half.h"

#include <bit>
#include <cmath>

namespace ts {
namespace {

struct Format {
  int mant;      // stored fraction bits
  int bias;      // exponent bias
  int exp_bits;
};
constexpr Format kF16{10, 15, 5};
constexpr Format kBF16{7, 127, 8};

// Rounds a float64 to the format with one rounding (ties to even) and returns the encoding.
uint16_t encode(double x, Format f) {
  const uint16_t sign = std::signbit(x) ? uint16_t(1u << 15) : 0;
  const uint16_t exp_all = uint16_t(((1u << f.exp_bits) - 1) << f.mant);
  if (std::isnan(x)) return uint16_t(sign | exp_all | (1u << (f.mant - 1)));
  double a = std::fabs(x);
  if (std::isinf(a)) return uint16_t(sign | exp_all);
  if (a == 0) return sign;
  const int emin = 1 - f.bias, emax = f.bias;
  int e;
  std::frexp(a, &e);
  int lead = std::max(e - 1, emin);
  double quantum = std::ldexp(1.0, lead - f.mant);
  double r = std::nearbyint(a / quantum) * quantum;  // ties-to-even in the default FP mode
  if (r == 0) return sign;
  std::frexp(r, &e);
  lead = e - 1;
  if (lead > emax) return uint16_t(sign | exp_all);
  if (lead < emin) {  // subnormal
    return uint16_t(sign | uint16_t(std::ldexp(r, f.mant - emin)));
  }
  uint32_t frac = uint32_t(std::ldexp(r, f.mant - lead)) - (1u << f.mant);
  return uint16_t(sign | uint32_t(lead + f.bias) << f.mant | frac);
}

float decode(uint16_t h, Format f) {
  const bool neg = h >> 15;
  const uint32_t e = (h >> f.mant) & ((1u << f.exp_bits) - 1);
  const uint32_t m = h & ((1u << f.mant) - 1);
  double v;
  if (e == (1u << f.exp_bits) - 1) {
    if (m == 0) return neg ? -INFINITY : INFINITY;
    // Keep the payload: float32 has room for it.
    uint32_t bits = (neg ? 0x80000000u : 0) | 0x7F800000u | (m << (23 - f.mant));
    return std::bit_cast<float>(bits);
  }
  if (e == 0) v = std::ldexp(double(m), 1 - f.bias - f.mant);
  else v = std::ldexp(double(m + (1u << f.mant)), int(e) - f.bias - f.mant);
  return float(neg ? -v : v);
}

uint16_t nan_from_f32(float f, Format fmt) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint16_t exp_all = uint16_t(((1u << fmt.exp_bits) - 1) << fmt.mant);
  uint16_t payload = uint16_t((bits & 0x7FFFFF) >> (23 - fmt.mant));
  return uint16_t(sign | exp_all | payload | (1u << (fmt.mant - 1)));  // quiet
}

}  // namespace

uint16_t f64_to_f16(double d) { return encode(d, kF16); }
uint16_t f64_to_bf16(double d) { return encode(d, kBF16); }
uint16_t f32_to_f16(float f) { return std::isnan(f) ? nan_from_f32(f, kF16) : encode(f, kF16); }
uint16_t f32_to_bf16(float f) { return std::isnan(f) ? nan_from_f32(f, kBF16) : encode(f, kBF16); }
float f16_to_f32(uint16_t h) { return decode(h, kF16); }
float bf16_to_f32(uint16_t h) { return decode(h, kBF16); }

}  // namespace ts
