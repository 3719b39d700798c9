#include "core/tensor.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/contract.h"
#include "core/errors.h"
#include "core/half.h"

namespace ts {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::f64})
    if (dtype_name(t) == s) return t;
  return std::nullopt;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw CaseTooLarge("negative dimension in " + shape_str(s));
    if (__builtin_mul_overflow(n, d, &n)) throw CaseTooLarge("element count of " + shape_str(s) + " overflows int64");
  }
  return n;
}

uint64_t checked_bytes(const Shape& s, uint64_t elem_size) {
  uint64_t b;
  if (__builtin_mul_overflow(uint64_t(numel(s)), elem_size, &b) || b > uint64_t(INT64_MAX))
    throw CaseTooLarge("byte size of " + shape_str(s) + " overflows");
  return b;
}

namespace {
thread_local AllocationLimit* active_limit = nullptr;
}

AllocationLimit::AllocationLimit(uint64_t limit, Mode mode) : outer_(active_limit), limit_(limit), mode_(mode) {
  active_limit = this;
}
bool AllocationLimit::shapes_only() { return active_limit && active_limit->mode_ == Mode::shapes_only; }
AllocationLimit::~AllocationLimit() { active_limit = outer_; }

void AllocationLimit::charge(uint64_t bytes, const Shape& shape) {
  AllocationLimit* l = active_limit;
  if (!l) return;
  if (bytes > l->limit_ - l->used_)
    throw CaseTooLarge(cat("case needs more than ", l->limit_, " bytes of tensors (", l->used_, " so far; ", shape.empty() ? std::string("the reference outputs") : "a tensor " + shape_str(shape), " need",
                           shape.empty() ? " " : "s ",
                           bytes, " more); the limit is kMaxCaseBytes in core/case_rules.h"));
  l->used_ += bytes;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Tensor::Tensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
  const uint64_t n = checked_bytes(shape, dtype_size(t));
  AllocationLimit::charge(n, shape);
  if (!AllocationLimit::shapes_only()) bytes.assign(size_t(n), 0);
}

template <class T>
static T load(const std::vector<uint8_t>& b, int64_t i) {
  T v;
  std::memcpy(&v, b.data() + size_t(i) * sizeof(T), sizeof(T));
  return v;
}
template <class T>
static void store(std::vector<uint8_t>& b, int64_t i, T v) {
  std::memcpy(b.data() + size_t(i) * sizeof(T), &v, sizeof(T));
}

double Tensor::get(int64_t i) const {
  if (bytes.empty()) return 0;  // a tensor made under AllocationLimit::Mode::shapes_only reads as zeros
  switch (dtype) {
    case DType::f32: return load<float>(bytes, i);
    case DType::f16: return f16_to_f32(load<uint16_t>(bytes, i));
    case DType::bf16: return bf16_to_f32(load<uint16_t>(bytes, i));
    case DType::i8: return load<int8_t>(bytes, i);
    case DType::i32: return load<int32_t>(bytes, i);
    case DType::f64: return load<double>(bytes, i);
  }
  return 0;
}

template <class I>
static I round_saturate(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
  if (r < double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r > double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return I(r);
}

void Tensor::set(int64_t i, double v) {
  if (bytes.empty()) return;  // a tensor made under AllocationLimit::Mode::shapes_only
  switch (dtype) {
    case DType::f32: store<float>(bytes, i, float(v)); break;  // C++ double->float is RNE
    case DType::f16: store<uint16_t>(bytes, i, f64_to_f16(v)); break;
    case DType::bf16: store<uint16_t>(bytes, i, f64_to_bf16(v)); break;
    case DType::i8: store<int8_t>(bytes, i, round_saturate<int8_t>(v)); break;
    case DType::i32: store<int32_t>(bytes, i, round_saturate<int32_t>(v)); break;
    case DType::f64: store<double>(bytes, i, v); break;
  }
}

void Tensor::values(int64_t first, int64_t count, double* out) const {
  switch (dtype) {
    case DType::f32:
      for (int64_t i = 0; i < count; ++i) out[i] = load<float>(bytes, first + i);
      break;
    case DType::f64: std::memcpy(out, bytes.data() + size_t(first) * 8, size_t(count) * 8); break;
    default:
      for (int64_t i = 0; i < count; ++i) out[i] = get(first + i);
  }
}

std::vector<double> Tensor::values() const {
  std::vector<double> v(static_cast<size_t>(numel()));
  values(0, numel(), v.data());
  return v;
}

uint64_t Tensor::bits(int64_t i) const {
  uint64_t r = 0;
  std::memcpy(&r, bytes.data() + size_t(i) * dtype_size(dtype), dtype_size(dtype));
  return r;
}

Tensor Tensor::cast(DType t) const {
  Tensor r(t, shape);
  for (int64_t i = 0; i < numel(); ++i) r.set(i, get(i));
  return r;
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype)) + shape_str(shape); }

}  // namespace ts
