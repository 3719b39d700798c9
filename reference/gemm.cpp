#include "reference/gemm.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ts {
namespace detail {
void gemm_base(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);
void gemm_avx2(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y);
}  // namespace detail

void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  (avx2 ? detail::gemm_avx2 : detail::gemm_base)(x, rows, k, m, n, y);
}

void parallel_rows(int64_t rows, int64_t block, int64_t work, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t blocks = (rows + block - 1) / block;
  const int64_t threads =
      std::min<int64_t>(blocks, work > (int64_t(1) << 24) ? std::max(1u, std::thread::hardware_concurrency()) : 1);
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t b; (b = next++) < blocks;) fn(b * block, std::min(rows, (b + 1) * block));
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace ts
