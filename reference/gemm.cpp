#include "reference/gemm.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace ts {
namespace detail {
void gemm_base(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);
void gemm_avx2(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);
}  // namespace detail

void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  auto kernel = avx2 ? detail::gemm_avx2 : detail::gemm_base;
  const int64_t threads = rows * k * n > (int64_t(1) << 24) ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  std::vector<std::thread> pool;
  auto part = [&](int64_t t) {
    int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
    kernel(x + r0 * k, r1 - r0, k, m, n, y + r0 * n);
  };
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(part, t);
  part(0);
  for (auto& th : pool) th.join();
}

}  // namespace ts
