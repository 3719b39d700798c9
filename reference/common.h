#pragma once
// Helpers shared by the operator definitions: seeded input data and shape rules that several
// operators state the same way.
#include <cmath>
#include <string>

#include "core/contract.h"
#include "core/op.h"
#include "core/rng.h"

namespace ts {

// Fills t with uniform [lo, hi) values from the case seed and the tensor's name (core/rng.h).
Tensor uniform_tensor(DType t, Shape s, uint64_t seed, const std::string& name, double lo = -1, double hi = 1);

// RoPE inverse frequency of pair i for a head of width d: theta^(-2i/d).
inline double inv_freq(int64_t i, int64_t d, double theta = 10000.0) {
  return std::pow(theta, -2.0 * double(i) / double(d));
}

// Unit roundoff of the arithmetic a kernel uses for `dtype` activations (float16 kernels compute in
// float32, so their arithmetic error is float32's; only the final store rounds to float16).
constexpr double kUnitF32 = 0x1p-24;

// PyTorch assert_close defaults: a backend computing an element-wise expression of a few float32
// operations per element stays far inside these; float16/bfloat16 are dominated by the output store.
Tolerance elementwise_tolerance(DType t);

// The variables every RoPE-family id shares: the first position of the angles, and how the
// rotation tables are drawn. `tables=random` fills them with arbitrary values in [-1, 1] (the
// contract allows any table), so a kernel that reads the wrong half or the wrong row of a table
// cannot hide behind the conventional form's symmetries.
Var pos_var();
Var tables_var();
bool random_tables(const Case& c);

// Rank / dtype rules stated identically by every operator.
void require_rank(Contract& c, const Problem& p, const std::string& name, size_t rank);
void require_same_dtype(Contract& c, const Problem& p);
bool has_inputs(Contract& c, const Problem& p, const std::vector<std::string>& names);

// Input tensors in the case dtype unless the case overrides one with `<name>_dtype=...` (a way to
// write a mixed-dtype invalid case).
DType input_dtype(const Case& c, const std::string& name);

}  // namespace ts
