// q8ta_linear, impl=tiled: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k].
// The 4x4-tile GEMM of q8ta_gemm_tile.glsl (shared with q8ta_conv2d's im2col), out [M, N] in row
// order; ceil(M/4) * ceil(N/4) invocations (gpu/plans/q8ta_linear.cpp). Requantization and
// the integer dot-product path (TS_INT_DOT): q8ta_requant.glsl.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint M; uint K; uint N; int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias;
} pc;

uint gemm_out_index(uint m, uint n) { return m * pc.N + n; }
uvec2 gemm_out_mn(uint f) { return uvec2(f / pc.N, f % pc.N); }

#include "q8ta_gemm_tile.glsl"

void main() { q8ta_gemm_tile(ts_linear_id()); }
