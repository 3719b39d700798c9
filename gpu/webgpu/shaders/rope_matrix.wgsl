// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per output texel, one element per lane; each lane's dot product accumulates in
// float32 in k order (the 4 lanes' sums advance together, independent of each other). Any layouts.
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

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 4 == 0: texel t is
// elements 4t .. 4t+3 of one row: the run path below without its checks.
const kBuffers = x_is_buffer && m_is_buffer && cos_is_buffer && sin_is_buffer && out_is_buffer;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  if (kBuffers && pc.D % 4u == 0u) {
    let f0 = 4u * t;
    let d0 = f0 % pc.D;
    let row = f0 / pc.D;
    let base = row * pc.D;
    let tab = (row % pc.S) * pc.D + d0;
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < pc.D; k++) {
      acc += x_at(base + k) * m_at4(k * pc.D + d0);
    }
    out_store(t, x_texel(t) * cos_texel(tab / 4u) + acc * sin_texel(tab / 4u));
    return;
  }
  let f0 = out_flat(t, 0u);
  let d0 = f0 % pc.D;
  // 4 consecutive elements of one row (lane 3 = lane 0 + 3: uniform lane strides make that
  // contiguity): the lanes share each x[k] and read m's row k as one 4-wide load. Each lane's sum is
  // the same float32 sequence as on the general path below: bit-identical results.
  if (out_flat(t, 3u) == f0 + 3u && d0 + 3u < pc.D) {
    let row = f0 / pc.D;
    let base = row * pc.D;
    let tab = (row % pc.S) * pc.D + d0;
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < pc.D; k++) {
      acc += x_at(base + k) * m_at4(k * pc.D + d0);
    }
    out_store(t, x_at4(f0) * cos_at4(tab) + acc * sin_at4(tab));
    return;
  }
  // Each lane's element; a padding lane computes lane 0's again and is not stored.
  var e: vec4<u32>;
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    e[j] = select(i, out_flat(t, 0u), i == TS_PAD);
  }
  let base = (e / vec4<u32>(pc.D)) * pc.D;  // each lane's row of x
  let d = e % vec4<u32>(pc.D);
  var acc = vec4<f32>(0.0);
  for (var k = 0u; k < pc.D; k++) {
    let xk = vec4<f32>(x_at(base.x + k), x_at(base.y + k), x_at(base.z + k), x_at(base.w + k));
    let mk = vec4<f32>(m_at(k * pc.D + d.x), m_at(k * pc.D + d.y), m_at(k * pc.D + d.z), m_at(k * pc.D + d.w));
    acc += xk * mk;
  }
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    let s = (i / pc.D) % pc.S;
    v[j] = x_at(i) * cos_at(s * pc.D + d[j]) + acc[j] * sin_at(s * pc.D + d[j]);
  }
  out_store(t, v);
}
