// q8ta_conv2d, impl=im2col, step 2 of 2: out[n,co,oh,ow] = requantize(acc), acc = sum_k (col[m,k] -
// x_zp) * weight[co,k] for pixel m = (n*OH + oh)*OW + ow, weight [C_out, C_in, KH, KW] read as
// [C_out, K]: q8ta_linear's 4x4-tile GEMM (q8ta_gemm_tile.wgsl, one copy) with x bound to the
// columns (the plan's bind), N = C_out, and out [N, C_out, OH, OW] placed by gemm_out_index.
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.wgsl.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
@group(0) @binding(2) var<storage, read> weight_scales : array<f32>;
@group(0) @binding(3) var<storage, read> bias : array<f32>;
TS_OUTPUT(out_, 4)
struct Params { M: u32, K: u32, N: u32, x_zp: i32, out_zp: i32, input_scale: f32, inv_out_scale: f32, has_bias: u32, OHW: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

// Row m is pixel m % OHW of image m / OHW; column n is the output channel.
fn gemm_out_index(m: u32, n: u32) -> u32 { return ((m / pc.OHW) * pc.N + n) * pc.OHW + m % pc.OHW; }
fn gemm_out_mn(f: u32) -> vec2<u32> { return vec2<u32>((f / (pc.OHW * pc.N)) * pc.OHW + f % pc.OHW, (f / pc.OHW) % pc.N); }

#include "q8ta_gemm_tile.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  q8ta_gemm_tile(ts_linear_id(gid, nwg));
}
