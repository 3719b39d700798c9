// q8ta_conv2d, impl=general (sliding window, any groups): out[n,co,oh,ow] = requantize(acc), with
//   acc = sum_{ci < Cg, kh, kw} (x[n, g*Cg + ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] - x_zp) * weight[co, ci, kh, kw]
// g = co / Cog (Cog = C_out / groups), Cg = C_in / groups; taps outside x are padding and read
// x_zp, so they add 0. One invocation per texel of out (any layout: the accessors' flat index
// [N, C_out, OH, OW]); padding lanes and all-padding texels store 0. The reduction runs over
// r = (ci*KH + kh)*KW + kw, weight's own order, so weight[co] is one contiguous row of Cg*KH*KW.
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.wgsl; the dot path
// packs 4 taps into a word (padding as x_zp's byte), sums x*w and subtracts x_zp * sum(w); the
// scalar path multiplies (x - x_zp) * w. The last Kg % 4 taps are added one at a time on both.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
@group(0) @binding(2) var<storage, read> weight_scales : array<f32>;
@group(0) @binding(3) var<storage, read> bias : array<f32>;
TS_OUTPUT(out_, 4)
struct Params {
  KH: u32, KW: u32, sh: u32, sw: u32, ph: u32, pw: u32, dh: u32, dw: u32, Cg: u32, Cog: u32,
  x_zp: i32, out_zp: i32, input_scale: f32, inv_out_scale: f32, has_bias: u32,
}
@group(0) @binding(5) var<uniform> pc : Params;

#include "q8ta_requant.wgsl"

// Tap r of output (n, oh, ow) in the group whose first input channel is c0: x there, or x_zp.
fn tap(n: u32, c0: u32, oh: u32, ow: u32, r: u32) -> i32 {
  let xd = x_dims();  // (W, H, C_in, N)
  let kw = r % pc.KW;
  let kh = (r / pc.KW) % pc.KH;
  let ci = r / (pc.KW * pc.KH);
  let ih = i32(oh * pc.sh + kh * pc.dh) - i32(pc.ph);
  let iw = i32(ow * pc.sw + kw * pc.dw) - i32(pc.pw);
  if (ih < 0 || iw < 0 || ih >= i32(xd.y) || iw >= i32(xd.x)) { return pc.x_zp; }
  return x_at(((n * xd.z + c0 + ci) * xd.y + u32(ih)) * xd.x + u32(iw));
}

fn conv_acc(f: u32) -> i32 {
  let od = out_dims();  // (OW, OH, C_out, N)
  let ow = f % od.x;
  let oh = (f / od.x) % od.y;
  let co = (f / (od.x * od.y)) % od.z;
  let n = f / (od.x * od.y * od.z);
  var c0 = (co / pc.Cog) * pc.Cg;  // the group's first input channel
  let Kg = pc.Cg * pc.KH * pc.KW;
  let K4 = Kg - Kg % 4u;
  let wo = co * Kg;
  var acc = 0;
  var wsum = 0;
  for (var r = 0u; r < K4; r += 4u) {
    let a = vec4<i32>(tap(n, c0, oh, ow, r), tap(n, c0, oh, ow, r + 1u), tap(n, c0, oh, ow, r + 2u), tap(n, c0, oh, ow, r + 3u));
    if (TS_INT_DOT == 1) {
      let b = bitcast<vec4<u32>>(a) & vec4<u32>(255u);
      let w = weight_packed4(wo + r);
      acc += dot4I8Packed(b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u), w);
      wsum += dot4I8Packed(w, ONES);
    } else {
      acc += dot(a - vec4<i32>(pc.x_zp), weight_at4(wo + r));
    }
  }
  acc -= pc.x_zp * wsum;
  for (var r = K4; r < Kg; r++) { acc += (tap(n, c0, oh, ow, r) - pc.x_zp) * weight_at(wo + r); }
  return acc;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= out_texels()) { return; }
  let C_out = out_dims().z;
  let plane = out_dims().x * out_dims().y;
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let f = out_flat(t, j);
    if (f != TS_PAD) { v[j] = requantize(conv_acc(f), (f / plane) % C_out); }
  }
  out_store(t, v);
}
