// q8ta_conv2d, impl=im2col, step 2 of 2: out[n,co,oh,ow] = requantize(acc), acc = sum_k (col[m,k] -
// x_zp) * weight[co,k] for pixel m = (n*OH + oh)*OW + ow, weight [C_out, C_in, KH, KW] read as
// [C_out, K]: q8ta_linear's 4x4-tile GEMM (q8ta_gemm_tile.glsl, one copy) with x bound to the
// columns (the plan's bind), N = C_out, and out [N, C_out, OH, OW] placed by gemm_out_index.
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.glsl.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint M; uint K; uint N; int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias; uint OHW;
} pc;

// Row m is pixel m % OHW of image m / OHW; column n is the output channel.
uint gemm_out_index(uint m, uint n) { return ((m / pc.OHW) * pc.N + n) * pc.OHW + m % pc.OHW; }
uvec2 gemm_out_mn(uint f) { return uvec2((f / (pc.OHW * pc.N)) * pc.OHW + f % pc.OHW, (f / pc.OHW) % pc.N); }

#include "q8ta_gemm_tile.glsl"

void main() { q8ta_gemm_tile(ts_linear_id()); }
