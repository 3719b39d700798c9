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

// The tolerance of a case whose outputs' float32 arithmetic errs, element by element, by at most
// `bounds` (output name -> float64 tensor of that output's shape), for outputs stored as `t`. Inputs
// are generated (or read from a golden) in the case dtype, so they widen to float32 exactly and the
// bounds cover all of the arithmetic; what is left is the final store:
//  - float16: the store rounds up or down (Vulkan leaves OpFConvert's rounding mode to the
//    implementation, WGSL its f32 -> f16 conversion likewise): less than one ulp, 2^-10 of the
//    value (11 significant bits).
//  - bfloat16: no shading language converts to it; the one shared accessor conversion
//    (gpu/ACCESSORS.md) rounds the float32 bits to nearest, ties to even, in integer arithmetic, so
//    the rounding is the same on every device and in every float rounding mode: at most half an
//    ulp, the unit roundoff 2^-8 of the value (8 significant bits).
//    Both are relative to the computed value, not the reference, so the bound grows by that factor
//    too; rtol is the store's relative error.
//  - atol: the stored dtype's subnormal spacing (float16 2^-24; bfloat16 2^-133, the spacing of the
//    float32 subnormals it keeps the top 16 bits of), plus 2^-100 for float32 subnormals that a
//    device may flush to zero anywhere in the arithmetic (each below 2^-126; a flushed bfloat16
//    input is one of them). float16 subnormals, loaded or stored, are taken to be kept (lavapipe
//    keeps them): a device that flushed them would fail elements near or below 2^-14.
//  - the float64 reference rounds too, by a few units of 2^-53 over the same terms: under 2^-20 of
//    any gamma_n bound, so the bounds grow by that factor.
Tolerance derived_tolerance(DType t, Tensors bounds);

// The variables every RoPE-family id shares: the first position of the angles, and how the
// rotation tables are drawn. `tables=random` fills them with arbitrary values in [-1, 1] (the
// contract allows any table), so a kernel that reads the wrong half or the wrong row of a table
// cannot hide behind the conventional form's symmetries.
Var pos_var();
Var tables_var();
// Texels of output `name` (shape s, the case dtype) in the case's layout for it: kernels that write
// it store whole texels (gpu/ACCESSORS.md), one invocation each.
// The float layouts (buffer and the three texture3d packings) for each named tensor: what an
// operator whose kernels go through the accessors of gpu/ACCESSORS.md declares in OpDef::layouts.
std::map<std::string, std::vector<std::string>> float_layouts(const std::vector<std::string>& tensors);

uint64_t out_texels(const Problem& p, const std::string& name, const Shape& s);

// Bytes of a tensor as stored (numel x element size), for the OpDef::bytes_moved models.
double tensor_bytes(const Tensor& t);
// Every input read once plus outputs of the named inputs' shapes written once, in the case dtype:
// the traffic of an elementwise operator (the RoPE family).
double elementwise_bytes(const Problem& p, const std::vector<std::string>& outputs_like);

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
