#pragma once
// Helpers shared by the operator definitions: seeded input data and shape rules that several
// operators state the same way.
#include <cmath>
#include <map>
#include <vector>
#include <string>

#include "core/contract.h"
#include "core/op.h"
#include "core/rng.h"

namespace ts {

// Fills t with uniform [lo, hi) values from the case seed and the tensor's name (core/rng.h).
Tensor uniform_tensor(DType t, Shape s, uint64_t seed, const std::string& name, double lo = -1, double hi = 1);

// RoPE inverse frequency of pair i for a head of width d: theta^(-2i/d).
constexpr double kRopeBase = 10000.0;
inline double inv_freq(int64_t i, int64_t d, double theta = kRopeBase) {
  return std::pow(theta, -2.0 * double(i) / double(d));
}

// How the kernels round, from which every operator derives its per-element tolerance.
// Vulkan's SPIR-V environment ("Precision of Individual Operations") and WGSL ("Floating Point
// Accuracy") both make float32 +, - and * "correctly rounded" in a weak sense: the exact result
// rounded up or down, the rounding mode left to the implementation. One operation thus errs by less
// than one ulp of its result, a relative 2^-23: twice IEEE round-to-nearest's 2^-24, which lavapipe
// and NVIDIA use, so a correct kernel stays below about half its bound. float16 kernels compute in
// float32 too (loads widen exactly); only the final store rounds to float16.
// Both let the compiler reassociate and contract a*b+c into an fma. The bounds below hold for any
// summation order (each term of an n-term sum passes through at most n-1 additions, whatever the
// tree) and an fma only drops a rounding.
constexpr double kUnitF32 = 0x1p-23;
// The relative error of rounding a value to dtype t once (float16 2^-11, bfloat16 2^-8, to nearest;
// float32 kUnitF32, any direction): what a kernel computing in t loses per operation.
constexpr double unit_roundoff(DType t) { return t == DType::f16 ? 0x1p-11 : t == DType::bf16 ? 0x1p-8 : kUnitF32; }

// Higham's gamma_n = n u / (1 - n u) with u = kUnitF32: n roundings move a value by at most
// gamma_n of it, and an n-term float32 dot product errs by at most gamma_n * sum |x_i y_i|.
double gamma_f32(double n);


// The variables every RoPE-family id shares: the first position of the angles, and how the
// rotation tables are drawn. `tables=random` fills them with arbitrary values in [-1, 1] (the
// contract allows any table), so a kernel that reads the wrong half or the wrong row of a table
// cannot hide behind the conventional form's symmetries.
Var pos_var();
Var tables_var();
// The float layouts (buffer and the three texture3d packings) for each named tensor: what an
// operator whose kernels go through the accessors of gpu/ACCESSORS.md declares in OpDef::layouts.
std::map<std::string, std::vector<std::string>> float_layouts(const std::vector<std::string>& tensors);



bool random_tables(const Case& c);

// An edge case in another storage (core/layout.h): in_storage(mk(...), "texture3d_c;cos=buffer").
inline Case in_storage(Case c, std::string storage) {
  c.storage = std::move(storage);
  return c;
}

// Rank / dtype rules stated identically by every operator.
void require_rank(Contract& c, const Problem& p, const std::string& name, size_t rank);
void require_same_dtype(Contract& c, const Problem& p);
bool has_inputs(Contract& c, const Problem& p, const std::vector<std::string>& names);

// Input tensors in the case dtype unless the case overrides one with `<name>_dtype=...` (a way to
// write a mixed-dtype invalid case).
DType input_dtype(const Case& c, const std::string& name);

}  // namespace ts
