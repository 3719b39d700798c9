#include "reference/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/contract.h"

namespace ts {

void gemm(const double* x, int64_t rows, int64_t k, const double* m, int64_t n, double* y) {
  // OpenBLAS stays on the calling thread: callers already spread row blocks over the cores
  // (parallel_rows), and OpenBLAS' own pool on top would put cores x cores threads on the machine
  // (and twice that under `ctest -j2`). Set in code so that OPENBLAS_NUM_THREADS cannot change it.
  static const bool single = (openblas_set_num_threads(1), true);
  (void)single;
  if (rows <= 0 || n <= 0) return;
  if (k <= 0) {  // the empty sum, without asking BLAS about it
    std::fill_n(y, rows * n, 0.0);
    return;
  }
  // Debian's OpenBLAS takes 32-bit dimensions (blasint is int); callers pass row blocks.
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  if (rows > kMax || k > kMax || n > kMax)
    throw std::invalid_argument(cat("gemm: [", rows, ",", k, "] x [", k, ",", n, "] exceeds the BLAS' 32-bit dimensions"));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows), blasint(n), blasint(k), 1.0, x,
              blasint(k), m, blasint(n), 0.0, y, blasint(n));
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
