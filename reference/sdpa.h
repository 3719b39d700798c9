#pragma once
// What sdpa's plan (gpu/plans/sdpa.cpp) reads of its contract: the parameters, and the cache rows
// as matrices, as the reference reads them.
#include <Eigen/Core>

#include "core/op.h"

namespace ts::sdpa {

// The shortest chunk of keys a split plan gives a workgroup: the contract's scratch_fits_32bit
// bounds the split partials by it, whatever chunks a plan chooses.
constexpr int64_t kMinChunk = 32;

int64_t input_pos(const Problem& p);
double scale_of(const Problem& p);  // params.scale, else 1/sqrt(D)

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Rows [0, m.rows()) of t [1,R,H,D] at head h, as the rows of m.
void copy_rows(const Tensor& t, int64_t h, Mat& m);
// The caches after step 1: rows input_pos .. input_pos+S-1 replaced by k and v, bit for bit.
Tensor updated(const Tensor& cache, const Tensor& rows, int64_t pos);

}  // namespace ts::sdpa
