#pragma once
// Row-blocked float64 matrix products for the references. Eigen's kernels are compiled twice
// (baseline x86-64 and AVX2+FMA) and picked at run time, so the binary runs on any x86-64 while the
// seed-sized rope_matrix reference takes about a second on 2 cores.
#include <cstdint>
#include <functional>

namespace ts {

// y[rows, n] = x[rows, k] * m[k, n], row-major, on the calling thread.
void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);

// Calls fn(begin, end) over [0, rows) in blocks of at most `block` rows, spread over the machine's
// cores when there is enough work (`work` = rows x the cost of a row, in multiply-adds).
void parallel_rows(int64_t rows, int64_t block, int64_t work, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ts
