#pragma once
// Element-wise comparison of a backend's output with the float64 reference (SPEC "Comparison and
// outcomes"): |out - ref| <= atol + elem[i] + rtol*|ref| (core/op.h Tolerance); NaN never passes;
// +-Inf must match in sign; an element still holding the poison pattern was never written.
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.h"

namespace ts {

// |error| / allowed over two dimensions of an output, for a reader to see where a kernel goes
// wrong: the output's last two (one row for a 1-d output, one cell for a scalar), each cell the max
// over what it covers (every index of the other dimensions, and a run of `step` indices of its own
// when a dimension is longer than kMaxMapSide). +inf marks NaN, a wrong infinity or an unwritten
// element. Made only for an output with a mismatch (a second pass), so a passing compare costs
// nothing more.
struct ErrorMap {
  static constexpr int64_t kMaxMapSide = 64;
  int row_dim = -1, col_dim = -1;      // dimensions of the output shown; -1: none (a single row / column)
  int64_t row_step = 1, col_step = 1;  // indices of that dimension per cell
  int64_t rows = 0, cols = 0;
  std::vector<float> cells;            // rows * cols, row-major

  bool empty() const { return cells.empty(); }
  float at(int64_t row, int64_t col) const { return cells[size_t(row * cols + col)]; }
};

struct CompareReport {
  std::string output;
  int64_t count = 0;
  int64_t mismatches = 0;      // elements outside tolerance (unwritten ones included)
  int64_t unwritten = 0;       // elements that still hold the poison pattern
  int64_t first_bad = -1;      // flat index of the first mismatch
  double first_got = 0, first_want = 0, first_allowed = 0;
  double max_abs = 0, max_rel = 0, nmse = 0;
  uint64_t max_ulp = 0;        // distance from the reference rounded to the output dtype
  double worst = 0;            // max |err| / allowed (atol + elem[i] + rtol*|ref|): <= 1 passes
  std::vector<std::vector<int64_t>> bad_per_dim;  // mismatches per index of each dimension
  ErrorMap map;                // outputs with a mismatch only
  Tolerance tol;

  bool ok() const { return mismatches == 0; }
};

// `poisoned` tells whether `got` came from a poisoned buffer (unwritten detection applies). The
// per-element bound of output `name` (tol.bound(name)), if any, must have ref's shape.
// `unwritten_mask` (integer outputs: RunOutput::unwritten) marks elements never written.
CompareReport compare(const std::string& name, const Tensor& got, const Tensor& ref, Tolerance tol,
                      bool poisoned, const std::vector<uint8_t>* unwritten_mask = nullptr);

// Every part of `tol` times k: two results each within `tol` of the exact value are within
// scaled(tol, 2) of each other.
Tolerance scaled(const Tolerance& tol, double k);

// "[0,3,1,7]" for a flat index of a shape.
std::string index_str(const Shape& s, int64_t flat);

}  // namespace ts
