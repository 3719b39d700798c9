#pragma once
// Row-blocked float64 matrix products for the references, through OpenBLAS (Debian's
// libopenblas-dev). OpenBLAS picks its kernels for the CPU at run time (DYNAMIC_ARCH), so one
// build runs on any x86-64 and no code of ours is compiled with CPU-specific flags: two copies of
// the same inline templates built with different flags were an ODR hazard (the linker may keep the
// AVX2 copy for the portable path).
#include <cstdint>
#include <functional>

namespace ts {

// y[rows, n] = x[rows, k] * m[k, n], row-major, on the calling thread.
void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);

// Calls fn(begin, end) over [0, rows) in blocks of at most `block` rows, spread over the machine's
// cores when there is enough work (`work` = rows x the cost of a row, in multiply-adds).
void parallel_rows(int64_t rows, int64_t block, int64_t work, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ts
