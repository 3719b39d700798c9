#pragma once
// What the operators' plans share: the tolerance of float arithmetic bounded element by element,
// the texels a kernel stores, and the bench's traffic models.
#include <string>
#include <vector>

#include "core/op.h"
#include "reference/common.h"

namespace ts {

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

// Texels of output `name` (shape s, the case dtype) in the case's layout for it: kernels that write
// it store whole texels (gpu/ACCESSORS.md), one invocation each.
uint64_t out_texels(const Problem& p, const std::string& name, const Shape& s);

// Bytes of a tensor as stored (numel x element size), for the OpPlan::bytes_moved models.
double tensor_bytes(const Tensor& t);
// Every input read once plus outputs of the named inputs' shapes written once, in the case dtype:
// the traffic of an elementwise operator (the RoPE family).
double elementwise_bytes(const Problem& p, const std::vector<std::string>& outputs_like);

}  // namespace ts
