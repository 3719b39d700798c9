#pragma once
// y[rows, n] = x[rows, k] * m[k, n] in float64, row-major, split over the machine's cores. Eigen's
// kernels are compiled twice (baseline x86-64 and AVX2+FMA) and picked at run time, so the binary
// still runs on any x86-64 while the seed-sized rope_matrix reference takes about a second.
#include <cstdint>

namespace ts {
void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);
}
