// sdpa QK (naive): for c < ctx, with kvh = h / (Hq / Hkv),
//   scores[h,s,c] = scale * dot(q[s,h,:], k_cache[c,kvh,:])   if c <= pos + s,
//   scores[h,s,c] = MASKED                                    if c >  pos + s (causal).
// One invocation per score; f32 accumulation in d order.
// Bindings (gpu/webgpu/PROTOCOL.md): q is read through its accessors (TS_INPUT, gpu/ACCESSORS.md:
// any layout); each storage array binds the tensor of its name; the uniform block `pc` takes the
// plan's uniforms by member name.
TS_INPUT(q, 0)
@group(0) @binding(1) var<storage, read> k_cache : array<DTYPE>;
@group(0) @binding(2) var<storage, read_write> scores : array<f32>;
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, scale: f32 }
@group(0) @binding(3) var<uniform> pc : Params;

// exp(MASKED - row max) is exactly 0 in the softmax (WGSL has no -inf literal).
const MASKED = -1.0e30;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let c = i % pc.ctx;
  let row = i / pc.ctx;
  let s = row % pc.S;
  let h = row / pc.S;
  if (c > pc.pos + s) {
    scores[i] = MASKED;
    return;
  }
  let D = pc.D4 * 4u;
  let kvh = h / (pc.Hq / pc.Hkv);
  let qb = (s * pc.Hq + h) * D;
  let kb = (c * pc.Hkv + kvh) * D;
  var acc = 0.0;
  for (var d = 0u; d < D; d++) {
    acc += q_at(qb + d) * f32(k_cache[kb + d]);
  }
  scores[i] = pc.scale * acc;
}
