#pragma once
// A tensor in logical (row-major, contiguous) form. Values are stored as raw bytes of `dtype` so
// that what a backend wrote, a golden file holds and a reference reads are the same bytes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace ts {

using Shape = std::vector<int64_t>;

// Element count; throws CaseTooLarge on a negative dimension or an int64 overflow.
int64_t numel(const Shape& s);
// numel(s) * elem_size, checked the same way.
uint64_t checked_bytes(const Shape& s, uint64_t elem_size);

// While one is alive (on this thread), every Tensor(dtype, shape) counts its bytes against `limit`
// and throws CaseTooLarge, before allocating, when the total would pass it.
// In Mode::shapes_only a Tensor(dtype, shape) is counted the same way but allocates nothing: it has
// its shape and no bytes: set() on it does nothing and get() reads 0. An operator's make() run under it gives a
// case's shapes and params, so its size is known before anything is built (check_case_size,
// core/case_rules.h); fills of input data skip their loops then (shapes_only()).
class AllocationLimit {
 public:
  enum class Mode { allocate, shapes_only };
  explicit AllocationLimit(uint64_t limit, Mode mode = Mode::allocate);
  ~AllocationLimit();
  AllocationLimit(const AllocationLimit&) = delete;
  AllocationLimit& operator=(const AllocationLimit&) = delete;
  // Counts `bytes` that are about to be allocated (a no-op when no limit is active).
  static void charge(uint64_t bytes, const Shape& shape);
  // Whether the innermost limit of this thread is Mode::shapes_only.
  static bool shapes_only();

 private:
  AllocationLimit* outer_;
  uint64_t limit_, used_ = 0;
  Mode mode_;
};
std::string shape_str(const Shape& s);  // "[1,2,3]"

struct Tensor {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  Tensor(DType t, Shape s);  // zero-filled

  int64_t numel() const { return ts::numel(shape); }
  size_t nbytes() const { return bytes.size(); }
  double get(int64_t i) const;        // exact value as float64
  void set(int64_t i, double v);      // rounds once to dtype (RNE; integers round and saturate); none without bytes
  uint64_t bits(int64_t i) const;     // raw element bits (for ULP distance and poison checks)
  Tensor cast(DType t) const;         // element-wise get/set
  std::vector<double> values() const; // every element as float64 (the dtype switch hoisted out of the loop)
  void values(int64_t first, int64_t count, double* out) const;  // elements [first, first+count)
  std::string describe() const;       // "float32[1,2,3]"
};

// Named tensors; std::map keeps a canonical (sorted) order for goldens and reports.
using Tensors = std::map<std::string, Tensor>;

}  // namespace ts
