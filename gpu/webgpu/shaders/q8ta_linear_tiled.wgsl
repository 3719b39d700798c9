// q8ta_linear, impl=tiled: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k].
// The 4x4-tile GEMM of q8ta_gemm_tile.wgsl (shared with q8ta_conv2d's im2col), out [M, N] in row
// order; ceil(M/4) * ceil(N/4) invocations (gpu/plans/q8ta_linear.cpp). Requantization and
// the integer dot-product path (TS_INT_DOT): q8ta_requant.wgsl.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
@group(0) @binding(2) var<storage, read> weight_scales : array<f32>;
@group(0) @binding(3) var<storage, read> bias : array<f32>;
TS_OUTPUT(out_, 4)
struct Params { M: u32, K: u32, N: u32, x_zp: i32, out_zp: i32, input_scale: f32, inv_out_scale: f32, has_bias: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

fn gemm_out_index(m: u32, n: u32) -> u32 { return m * pc.N + n; }
fn gemm_out_mn(f: u32) -> vec2<u32> { return vec2<u32>(f / pc.N, f % pc.N); }

#include "q8ta_gemm_tile.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  q8ta_gemm_tile(ts_linear_id(gid, nwg));
}
