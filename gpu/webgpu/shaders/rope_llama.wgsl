// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per output texel, xq_out's tq texels first, then xk_out's; each element computed in
// float32 (float16 and bfloat16 only in storage), whatever layout each tensor has.
// Bandwidth: when the texel's 4 lanes are 4 consecutive elements (every buffer texel; lane 3 = lane 0
// + 3 implies it in every layout, the lane strides being uniform), they are two whole pairs: one
// 4-wide load of x and two table entries, the row arithmetic done once per texel. When D % 4 == 2
// the second pair may start the next row (table row of that row, i = 0). Other texels take the
// per-lane path; both evaluate the same float32 expression per element: bit-identical results.
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

// The pair (a, b) rotated by table entry k: (even output, odd output).
fn rotate(a: f32, b: f32, k: u32) -> vec2<f32> {
  let c = freqs_cos_at(k);
  let n = freqs_sin_at(k);
  return vec2<f32>(a * c - b * n, a * n + b * c);
}

fn out_flat(is_q: bool, t: u32, j: u32) -> u32 {
  if (is_q) { return xq_out_flat(t, j); }
  return xk_out_flat(t, j);
}

fn x_at(is_q: bool, i: u32) -> f32 {
  if (is_q) { return xq_at(i); }
  return xk_at(i);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let is_q = id < pc.tq;
  let t = select(id - pc.tq, id, is_q);
  let D = 2u * pc.hd;
  let H = select(pc.Hkv, pc.Hq, is_q);
  let f0 = out_flat(is_q, t, 0u);
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  if (out_flat(is_q, t, 3u) == f0 + 3u && f0 % 2u == 0u) {
    var x: vec4<f32>;
    if (is_q) { x = xq_at4(f0); } else { x = xk_at4(f0); }
    let row = f0 / D;
    let d = f0 - row * D;
    let a = ((row / H) % pc.S) * pc.hd + d / 2u;  // table entry of pair 0
    var b = a + 1u;                                // of pair 1
    if (d + 2u >= D) { b = (((row + 1u) / H) % pc.S) * pc.hd; }
    v = vec4<f32>(rotate(x.x, x.y, a), rotate(x.z, x.w, b));
  } else {
    for (var j = 0u; j < 4u; j++) {
      let f = out_flat(is_q, t, j);
      if (f == TS_PAD) { continue; }
      let p = f - f % 2u;
      let r = rotate(x_at(is_q, p), x_at(is_q, p + 1u), ((f / D / H) % pc.S) * pc.hd + (f % D) / 2u);
      v[j] = select(r.y, r.x, f % 2u == 0u);
    }
  }
  if (is_q) { xq_out_store(t, v); } else { xk_out_store(t, v); }
}
