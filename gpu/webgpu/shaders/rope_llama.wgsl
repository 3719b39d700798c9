// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// Invocation id takes tpi output texels (the plan's: 2 when D % 8 == 0, else 1) from tpi*u of xq_out
// (u = id < nq) or of xk_out (u = id - nq); each element computed in float32 (float16 and bfloat16
// only in storage), whatever layout each tensor has. Bandwidth: when the texels' lanes are 4*tpi
// consecutive elements of one row (every buffer texel when D % 8 == 0; lane strides are uniform
// within a texel, so these lane indices decide it in every layout), they are whole pairs with
// consecutive table entries: 4-wide loads of x (and of both tables for two texels), the row
// arithmetic once per run. Other texels take the per-lane path; both evaluate the same float32
// expression per element: bit-identical results. When every tensor is a buffer (known when
// compiling) and D % 8 == 0, the fast path below replaces all of this.
// Tensors: TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md); the uniform block `pc` takes the plan's uniforms
// by member name (gpu/webgpu/PROTOCOL.md). The preamble gives WG, ts_linear_id and the accessors.
TS_INPUT(xq, 0)
TS_INPUT(xk, 1)
TS_INPUT(freqs_cos, 2)
TS_INPUT(freqs_sin, 3)
TS_OUTPUT(xq_out, 4)
TS_OUTPUT(xk_out, 5)
struct Params { n: u32, nq: u32, tq: u32, tk: u32, tpi: u32, S: u32, Hq: u32, Hkv: u32, hd: u32 }
@group(0) @binding(6) var<uniform> pc : Params;

fn rotate(a: f32, b: f32, c: f32, n: f32) -> vec2<f32> { return vec2<f32>(a * c - b * n, a * n + b * c); }

fn out_flat(is_q: bool, t: u32, j: u32) -> u32 {
  if (is_q) { return xq_out_flat(t, j); }
  return xk_out_flat(t, j);
}
fn x_at(is_q: bool, i: u32) -> f32 {
  if (is_q) { return xq_at(i); }
  return xk_at(i);
}
fn x_at4(is_q: bool, i: u32) -> vec4<f32> {
  if (is_q) { return xq_at4(i); }
  return xk_at4(i);
}
// whole: every lane of texel t is in the tensor (the fast path's texels), so the store skips
// counting them (the accessor's NAME_store_texel).
fn out_store(is_q: bool, t: u32, value: vec4<f32>, whole: bool) {
  var v = value;  // a variable: tests/test_broken_kernels.cpp splices a lossy store in after this line
  if (whole) {
    if (is_q) { xq_out_store_texel(t, v); } else { xk_out_store_texel(t, v); }
  } else {
    if (is_q) { xq_out_store(t, v); } else { xk_out_store(t, v); }
  }
}

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 8 == 0 (tpi == 2): texel t
// is elements 4t .. 4t+3, two whole pairs of one row, and every texel is whole. Invocation u takes
// texels u and u + half (half = its tensor's invocations), so a subgroup's loads and stores cover
// consecutive texels; no accessor arithmetic. The table entries a, a+1 (a even) lie in one texel.
const kBuffers = xq_is_buffer && xk_is_buffer && freqs_cos_is_buffer && freqs_sin_is_buffer && xq_out_is_buffer &&
                 xk_out_is_buffer;

fn fast_texel(is_q: bool, t: u32, D: u32, H: u32) {
  let f0 = 4u * t;
  let d = f0 % D;
  let a = ((f0 / D / H) % pc.S) * pc.hd + d / 2u;
  var x: vec4<f32>;
  if (is_q) { x = xq_texel(t); } else { x = xk_texel(t); }
  let c4 = freqs_cos_texel(a / 4u);
  let n4 = freqs_sin_texel(a / 4u);
  let hi = (a & 2u) != 0u;
  let c = select(c4.xy, c4.zw, hi);
  let n = select(n4.xy, n4.zw, hi);
  let v = vec4<f32>(rotate(x.x, x.y, c.x, n.x), rotate(x.z, x.w, c.y, n.y));
  out_store(is_q, t, v, true);
}

// One texel, lane by lane (padding lanes stay 0).
fn texel(is_q: bool, t: u32, D: u32, H: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  for (var j = 0u; j < 4u; j++) {
    let f = out_flat(is_q, t, j);
    if (f == TS_PAD) { continue; }
    let p = f - f % 2u;
    let k = ((f / D / H) % pc.S) * pc.hd + (f % D) / 2u;
    let r = rotate(x_at(is_q, p), x_at(is_q, p + 1u), freqs_cos_at(k), freqs_sin_at(k));
    v[j] = select(r.y, r.x, f % 2u == 0u);
  }
  return v;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let is_q = id < pc.nq;
  if (kBuffers && pc.tpi == 2u) {
    let u = select(id - pc.nq, id, is_q);
    let half_ = select(pc.n - pc.nq, pc.nq, is_q);
    let D = 2u * pc.hd;
    let H = select(pc.Hkv, pc.Hq, is_q);
    fast_texel(is_q, u, D, H);
    if (u + half_ < select(pc.tk, pc.tq, is_q)) { fast_texel(is_q, u + half_, D, H); }
    return;
  }
  let t = pc.tpi * select(id - pc.nq, id, is_q);
  let count = select(pc.tk, pc.tq, is_q);
  let last = t + pc.tpi - 1u;
  let D = 2u * pc.hd;
  let H = select(pc.Hkv, pc.Hq, is_q);
  let f0 = out_flat(is_q, t, 0u);
  let d = f0 % D;
  var run = last < count && f0 % 2u == 0u && d + 4u * pc.tpi <= D && out_flat(is_q, last, 3u) == f0 + 4u * pc.tpi - 1u;
  if (run && pc.tpi == 2u) { run = out_flat(is_q, t, 3u) == f0 + 3u && out_flat(is_q, t + 1u, 0u) == f0 + 4u; }
  if (run) {
    let a = ((f0 / D / H) % pc.S) * pc.hd + d / 2u;  // table entries a, a+1, ...
    let x0 = x_at4(is_q, f0);
    if (pc.tpi == 1u) {
      out_store(is_q, t, vec4<f32>(rotate(x0.x, x0.y, freqs_cos_at(a), freqs_sin_at(a)),
                                   rotate(x0.z, x0.w, freqs_cos_at(a + 1u), freqs_sin_at(a + 1u))), false);
      return;
    }
    let x1 = x_at4(is_q, f0 + 4u);
    let c = freqs_cos_at4(a);
    let n = freqs_sin_at4(a);
    out_store(is_q, t, vec4<f32>(rotate(x0.x, x0.y, c.x, n.x), rotate(x0.z, x0.w, c.y, n.y)), false);
    out_store(is_q, t + 1u, vec4<f32>(rotate(x1.x, x1.y, c.z, n.z), rotate(x1.z, x1.w, c.w, n.w)), false);
    return;
  }
  for (var u = t; u <= last && u < count; u++) { out_store(is_q, u, texel(is_q, u, D, H), false); }
}
