#pragma once
// Included by gemm_base.cpp and gemm_avx2.cpp, which differ only in their compile flags.
#include <Eigen/Core>

namespace ts::detail {
inline void gemm_rows(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> X(x, rows, k), M(m, k, n);
  Eigen::Map<Mat> Y(y, rows, n);
  Y.noalias() = X * M;
}
}  // namespace ts::detail
