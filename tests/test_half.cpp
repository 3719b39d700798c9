// float16 / bfloat16 conversion, checked over all 65,536 bit patterns against an independent
// reading of the formats (ldexp of the fields), plus rounding ties and overflow.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "core/half.h"

namespace ts {
namespace {

double decode_fields(uint16_t h, int mant, int bias) {
  int e = (h >> mant) & ((1 << (15 - mant)) - 1);
  int m = h & ((1 << mant) - 1);
  double s = (h >> 15) ? -1 : 1;
  if (e == (1 << (15 - mant)) - 1) return m ? NAN : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, 1 - bias - mant);
  return s * std::ldexp(m + (1 << mant), e - bias - mant);
}

TEST(Half, EveryFloat16PatternDecodesAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = uint16_t(b);
    float f = f16_to_f32(h);
    double want = decode_fields(h, 10, 15);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << std::hex << b;
      ASSERT_EQ(f32_to_f16(f) & 0x8000, h & 0x8000) << "NaN sign " << std::hex << b;
      continue;
    }
    ASSERT_EQ(double(f), want) << std::hex << b;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << b;  // exact values round-trip bit-exactly, -0 included
    ASSERT_EQ(f64_to_f16(want), h) << std::hex << b;
  }
}

TEST(Half, EveryBfloat16PatternDecodesAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = uint16_t(b);
    float f = bf16_to_f32(h);
    double want = decode_fields(h, 7, 127);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(double(f), want) << std::hex << b;
    ASSERT_EQ(std::bit_cast<uint32_t>(f) >> 16, b) << "bfloat16 is the top half of float32";
    ASSERT_EQ(f32_to_bf16(f), h) << std::hex << b;
  }
}

// Midpoints between adjacent float16 values round to the even neighbour; just off a midpoint rounds
// to the nearer one. Checked for every adjacent pair of finite positive values.
TEST(Half, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint16_t h = 0; h < 0x7BFF; ++h) {
    double lo = f16_to_f32(h), hi = f16_to_f32(uint16_t(h + 1));
    double mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? uint16_t(h + 1) : h;
    ASSERT_EQ(f64_to_f16(mid), even) << std::hex << h;
    ASSERT_EQ(f64_to_f16(std::nextafter(mid, 0.0)), h) << std::hex << h;
    ASSERT_EQ(f64_to_f16(std::nextafter(mid, 1e9)), uint16_t(h + 1)) << std::hex << h;
    float midf = float(mid);  // exact in float32: float16 midpoints need 12 bits
    ASSERT_EQ(f32_to_f16(midf), even);
  }
}

TEST(Half, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(f32_to_f16(65504.f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65519.99f), 0x7BFF);  // below the midpoint to 65536
  EXPECT_EQ(f32_to_f16(65520.f), 0x7C00);    // the midpoint rounds to even = infinity
  EXPECT_EQ(f32_to_f16(-1e10f), 0xFC00);
  EXPECT_EQ(f32_to_f16(INFINITY), 0x7C00);
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);   // smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);   // half of it: tie to even (zero)
  EXPECT_EQ(f32_to_f16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(0x1.01p0f), 0x3F80);  // tie-free: rounds down
  EXPECT_EQ(f32_to_bf16(0x1.018p0f), 0x3F81);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie to even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds to inf
  // A float64 just above a float16 midpoint must not double-round through float32.
  double d = 1.0 + 0x1p-11 + 0x1p-40;  // float32 would round it to the midpoint, then to even (1.0)
  EXPECT_EQ(f64_to_f16(d), 0x3C01);
}

}  // namespace
}  // namespace ts
