#pragma once
// Exact IEEE float16 / bfloat16 <-> float32 conversion, round to nearest even, with NaN, Inf and
// subnormals handled bit-exactly. Written by hand (not _Float16) so results never depend on the
// compiler or the host's F16C support.
#include <cstdint>

namespace ts {
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);
// float64 -> float16/bfloat16 with a single rounding (no double rounding through float32).
uint16_t f64_to_f16(double d);
uint16_t f64_to_bf16(double d);
}  // namespace ts
