// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair k = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per output texel,
// one element per lane, float32 arithmetic, any layouts.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md; `out_` is tensor out, accessors out_*); the
// uniform block `pc` takes the plan's uniforms by member name (gpu/webgpu/PROTOCOL.md).
TS_INPUT(x, 0)
TS_INPUT(freqs_cis, 1)
TS_OUTPUT(out_, 2)
struct Params { n: u32, nc2: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  for (var j = 0u; j < 4u; j++) {
    let f = out_flat(t, j);
    if (f == TS_PAD) { continue; }
    let p = f / 2u;
    let k = p % pc.nc2;
    let c = freqs_cis_at(2u * k);
    let s = freqs_cis_at(2u * k + 1u);
    let a = x_at(2u * p);
    let b = x_at(2u * p + 1u);
    if (f % 2u == 0u) { v[j] = a * c - b * s; } else { v[j] = a * s + b * c; }
  }
  out_store(t, v);
}
