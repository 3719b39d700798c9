#pragma once
// Element-wise comparison of a backend's output with the float64 reference (SPEC "Comparison and
// outcomes"): |out - ref| <= atol + rtol*|ref|; NaN never passes; +-Inf must match in sign; an
// element still holding the poison pattern was never written.
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.h"

namespace ts {

struct CompareReport {
  std::string output;
  int64_t count = 0;
  int64_t mismatches = 0;      // elements outside tolerance (unwritten ones included)
  int64_t unwritten = 0;       // elements that still hold the poison pattern
  int64_t first_bad = -1;      // flat index of the first mismatch
  double first_got = 0, first_want = 0;
  double max_abs = 0, max_rel = 0, nmse = 0;
  uint64_t max_ulp = 0;        // distance from the reference rounded to the output dtype
  double worst = 0;            // max |err| / (atol + rtol*|ref|): <= 1 passes
  std::vector<std::vector<int64_t>> bad_per_dim;  // mismatches per index of each dimension
  Tolerance tol;

  bool ok() const { return mismatches == 0; }
};

// `poisoned` tells whether `got` came from a poisoned buffer (unwritten detection applies).
CompareReport compare(const std::string& name, const Tensor& got, const Tensor& ref, Tolerance tol,
                      bool poisoned);

// "[0,3,1,7]" for a flat index of a shape.
std::string index_str(const Shape& s, int64_t flat);

}  // namespace ts
