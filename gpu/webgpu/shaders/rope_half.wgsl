// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per output texel, one element per lane, float32 arithmetic, any layouts.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md; `cos_`, `sin_`, `out_` are the tensors cos, sin,
// out, with accessors cos_at, sin_at, out_store: cos and sin are WGSL builtins); the uniform block
// `pc` takes the plan's uniforms by member name (gpu/webgpu/PROTOCOL.md).
TS_INPUT(x, 0)
TS_INPUT(cos_, 1)
TS_INPUT(sin_, 2)
TS_OUTPUT(out_, 3)
struct Params { n: u32, S: u32, D: u32 }
@group(0) @binding(4) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let hd = pc.D / 2u;
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    let d = i % pc.D;
    let s = (i / pc.D) % pc.S;
    // Only the branch taken reads x, so neither index leaves the row.
    var r: f32;
    if (d < hd) { r = -x_at(i + hd); } else { r = x_at(i - hd); }
    v[j] = x_at(i) * cos_at(s * pc.D + d) + r * sin_at(s * pc.D + d);
  }
  out_store(t, v);
}
