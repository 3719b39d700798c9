#pragma once
// What GPU backends fill outputs and scratch with before a dispatch, and what the comparison reads
// as "never written": NaN with a recognisable payload for floats. For integers every pattern is a
// legal value, so an integer output is proven written by two runs with two sentinels (SPEC
// "Layouts"): `second` gives the other one (floats have one pattern).
#include <cstdint>

#include "core/tensor.h"

namespace ts {

inline uint64_t poison_bits(DType t, bool second = false) {
  switch (t) {
    case DType::f32: return 0x7FD15EA5u;  // quiet NaN, payload "poisoned"
    case DType::f16: return 0x7E5Au;
    case DType::bf16: return 0x7FD1u;
    case DType::f64: return 0x7FFD15EA5D15EA5Dull;
    case DType::i8: return second ? 0xC3u : 0x5Au;
    case DType::i32: return second ? 0xC3C3C3C3u : 0x5A5A5A5Au;
  }
  return 0;
}

}  // namespace ts
