// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per output texel, xq_out's tq texels first, then xk_out's; each lane is one element,
// computed in float32 (float16 and bfloat16 only in storage), whatever layout each tensor has.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md); the uniform block `pc` takes the plan's uniforms
// by member name (gpu/webgpu/PROTOCOL.md). The preamble gives WG, ts_linear_id and the accessors.
TS_INPUT(xq, 0)
TS_INPUT(xk, 1)
TS_INPUT(freqs_cos, 2)
TS_INPUT(freqs_sin, 3)
TS_OUTPUT(xq_out, 4)
TS_OUTPUT(xk_out, 5)
struct Params { n: u32, tq: u32, S: u32, Hq: u32, Hkv: u32, hd: u32 }
@group(0) @binding(6) var<uniform> pc : Params;

// Element e (of D = 2*hd) of a row at sequence position s, from its pair (a, b) = (x[2i], x[2i+1]).
fn rotate(a: f32, b: f32, s: u32, e: u32) -> f32 {
  let i = e / 2u;
  let c = freqs_cos_at(s * pc.hd + i);
  let n = freqs_sin_at(s * pc.hd + i);
  if (e % 2u == 0u) { return a * c - b * n; }
  return a * n + b * c;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let D = 2u * pc.hd;
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  if (id < pc.tq) {
    for (var j = 0u; j < 4u; j++) {
      let f = xq_out_flat(id, j);
      if (f == TS_PAD) { continue; }
      let p = f - f % 2u;
      v[j] = rotate(xq_at(p), xq_at(p + 1u), (f / D / pc.Hq) % pc.S, f % D);
    }
    xq_out_store(id, v);
  } else {
    let t = id - pc.tq;
    for (var j = 0u; j < 4u; j++) {
      let f = xk_out_flat(t, j);
      if (f == TS_PAD) { continue; }
      let p = f - f % 2u;
      v[j] = rotate(xk_at(p), xk_at(p + 1u), (f / D / pc.Hkv) % pc.S, f % D);
    }
    xk_out_store(t, v);
  }
}
