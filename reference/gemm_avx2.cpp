#include "reference/gemm_kernel.h"
namespace ts::detail {
void gemm_avx2(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y) {
  gemm_rows(x, rows, k, m, n, y);
}
}  // namespace ts::detail
