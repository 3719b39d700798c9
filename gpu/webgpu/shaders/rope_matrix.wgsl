// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per output texel, one element per lane; the dot product accumulates in float32 in
// k order. Any layouts.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md; `cos_`, `sin_`, `out_` are the tensors cos, sin,
// out, with accessors cos_at, sin_at, out_store: cos and sin are WGSL builtins); the uniform block
// `pc` takes the plan's uniforms by member name (gpu/webgpu/PROTOCOL.md).
TS_INPUT(x, 0)
TS_INPUT(m, 1)
TS_INPUT(cos_, 2)
TS_INPUT(sin_, 3)
TS_OUTPUT(out_, 4)
struct Params { n: u32, S: u32, D: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    let d = i % pc.D;
    let row = i / pc.D;
    let s = row % pc.S;
    let base = row * pc.D;
    var acc = 0.0;
    for (var k = 0u; k < pc.D; k++) {
      acc += x_at(base + k) * m_at(k * pc.D + d);
    }
    v[j] = x_at(i) * cos_at(s * pc.D + d) + acc * sin_at(s * pc.D + d);
  }
  out_store(t, v);
}
