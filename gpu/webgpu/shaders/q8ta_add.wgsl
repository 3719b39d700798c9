// q8ta_add: out = clamp(round(q) + out_zp, -128, 127) with, element by element,
//   q = (a_scale * f32(a - a_zp) + b_scale * f32(b - b_zp)) * inv_out_scale     (float32)
// round() is WGSL's, ties to even; the zero point is added after rounding and the clamp is in float.
// inv_out_scale is 1 / output_scale rounded once to float32 on the host (gpu/plans/q8ta_add.cpp).
// One invocation per texel (32-bit word) of out, all n of them, padding lanes 0 (the accessor);
// a, b and out each in any int8 layout (gpu/ACCESSORS.md), element by element through the accessors.
TS_INPUT(a, 0)
TS_INPUT(b, 1)
TS_OUTPUT(out_, 2)
struct Params { a_scale: f32, b_scale: f32, inv_out_scale: f32, a_zp: i32, b_zp: i32, out_zp: i32, n: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

fn requantize(q: f32) -> i32 {
  return i32(clamp(round(q) + f32(pc.out_zp), -128.0, 127.0));
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    let q = (pc.a_scale * f32(a_at(i) - pc.a_zp) + pc.b_scale * f32(b_at(i) - pc.b_zp)) * pc.inv_out_scale;
    v[j] = requantize(q);
  }
  out_store(t, v);
}
