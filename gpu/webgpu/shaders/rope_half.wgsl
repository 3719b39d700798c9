// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per output texel, float32 arithmetic, any layouts. Bandwidth: when the texel's
// lanes are 4 consecutive elements (lane 3 = lane 0 + 3: uniform lane strides make that contiguity)
// in one half of one row (every buffer texel when D % 8 == 0), x, its partner run, cos and sin are
// each one 4-wide load and the row arithmetic is done once; other texels take the per-lane path.
// Both evaluate the same float32 expression per element (negation is exact): bit-identical.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md; `cos_`, `sin_`, `out_` are the tensors cos, sin,
// out, with accessors cos_at, sin_at, out_store: cos and sin are WGSL builtins); the uniform block
// `pc` takes the plan's uniforms by member name (gpu/webgpu/PROTOCOL.md).
TS_INPUT(x, 0)
TS_INPUT(cos_, 1)
TS_INPUT(sin_, 2)
TS_OUTPUT(out_, 3)
struct Params { n: u32, S: u32, D: u32 }
@group(0) @binding(4) var<uniform> pc : Params;

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 8 == 0: texel t is
// elements 4t .. 4t+3 of one half of one row, its partner run is texel t -+ D/8 and its table run
// one texel: the same expression as the run path below, with no accessor arithmetic.
const kBuffers = x_is_buffer && cos_is_buffer && sin_is_buffer && out_is_buffer;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let hd = pc.D / 2u;
  let fast = kBuffers && pc.D % 8u == 0u;
  var f0 = 4u * t;
  if (!fast) { f0 = out_flat(t, 0u); }
  let d0 = f0 % pc.D;
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  if (fast) {
    let tab = ((f0 / pc.D) % pc.S) * pc.D + d0;
    var r: vec4<f32>;
    if (d0 < hd) { r = -x_texel(t + hd / 4u); } else { r = x_texel(t - hd / 4u); }
    v = x_texel(t) * cos_texel(tab / 4u) + r * sin_texel(tab / 4u);
  } else if (out_flat(t, 3u) == f0 + 3u && (d0 + 3u < hd || (d0 >= hd && d0 + 3u < pc.D))) {
    let tab = ((f0 / pc.D) % pc.S) * pc.D + d0;
    // Only the branch taken reads x, so neither run leaves the row.
    var r: vec4<f32>;
    if (d0 < hd) { r = -x_at4(f0 + hd); } else { r = x_at4(f0 - hd); }
    v = x_at4(f0) * cos_at4(tab) + r * sin_at4(tab);
  } else {
    for (var j = 0u; j < 4u; j++) {
      let i = out_flat(t, j);
      if (i == TS_PAD) { continue; }
      let d = i % pc.D;
      let s = (i / pc.D) % pc.S;
      var r: f32;
      if (d < hd) { r = -x_at(i + hd); } else { r = x_at(i - hd); }
      v[j] = x_at(i) * cos_at(s * pc.D + d) + r * sin_at(s * pc.D + d);
    }
  }
  out_store(t, v);
}
