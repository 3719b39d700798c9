// q8ta_conv2d, impl=im2col, step 1 of 2 (groups = 1, C_in % 4 == 0): the columns of the GEMM,
//   col[m, k] = x[n, ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw], or x_zp where that is padding,
// for output pixel m = (n*OH + oh)*OW + ow and tap k = (ci*KH + kh)*KW + kw (weight's own order), in
// an int8 scratch buffer [M, K], raw values (q8ta_conv2d_gemm subtracts x_zp as q8ta_linear does).
// One invocation per word of col: 4 taps of one pixel (K = C_in*KH*KW is a multiple of 4).
TS_INPUT(x, 0)
TS_OUTPUT(col, 1)
struct Params { KH: u32, KW: u32, sh: u32, sw: u32, ph: u32, pw: u32, dh: u32, dw: u32, x_zp: i32, K: u32, OH: u32, OW: u32 }
@group(0) @binding(2) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= col_texels()) { return; }
  let xd = x_dims();  // (W, H, C_in, N)
  let m = (4u * t) / pc.K;
  let ow = m % pc.OW;
  let oh = (m / pc.OW) % pc.OH;
  let n = m / (pc.OW * pc.OH);
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let k = (4u * t) % pc.K + j;
    let kw = k % pc.KW;
    let kh = (k / pc.KW) % pc.KH;
    let ci = k / (pc.KW * pc.KH);
    let ih = i32(oh * pc.sh + kh * pc.dh) - i32(pc.ph);
    let iw = i32(ow * pc.sw + kw * pc.dw) - i32(pc.pw);
    let inside = ih >= 0 && iw >= 0 && ih < i32(xd.y) && iw < i32(xd.x);
    v[j] = pc.x_zp;
    if (inside) { v[j] = x_at(((n * xd.z + ci) * xd.y + u32(ih)) * xd.x + u32(iw)); }
  }
  col_store(t, v);
}
