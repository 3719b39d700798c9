#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ts {

enum class DType : uint8_t { f32, f16, bf16, i8, i32, f64 };

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    case DType::i8: return "int8";
    case DType::i32: return "int32";
    case DType::f64: return "float64";
  }
  return "?";
}

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::i8: return 1;
    case DType::f64: return 8;
  }
  return 0;
}

constexpr bool is_float(DType t) { return t != DType::i8 && t != DType::i32; }

std::optional<DType> parse_dtype(std::string_view s);

}  // namespace ts
