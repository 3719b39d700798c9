// sdpa split (flash-decoding), step 2 of 2, as gpu/vulkan/shaders/sdpa_split_combine.comp: for
// output row (s, h) and its chunks j with j * chunk <= pos + s (each holds a key the query sees),
//   M = max_j m_j,  a_j = exp(m_j - M),  out = (sum_j a_j part_o[j]) * (1 / sum_j a_j l_j),
// f32, j in order. One invocation per output texel (a buffer or width-packed, W = D % 4 == 0: 4
// consecutive head dims of one row).
// Bindings (gpu/webgpu/PROTOCOL.md): `out_` is tensor out (TS_OUTPUT, gpu/ACCESSORS.md); each
// storage array binds the tensor of its name; `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> part_o : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> part_ml : array<vec2<f32>>;
TS_OUTPUT(out_, 2)
struct Params { n: u32, Hq: u32, D4: u32, pos: u32, chunk: u32, chunks: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let f = out_flat(t, 0u);
  let D = 4u * pc.D4;
  let r = f / D;
  let d4 = (f % D) / 4u;
  let s = r / pc.Hq;
  let nv = min((pc.pos + s) / pc.chunk + 1u, pc.chunks);
  let b = r * pc.chunks;
  var M = part_ml[b].x;
  for (var j = 1u; j < nv; j++) { M = max(M, part_ml[b + j].x); }
  var L = 0.0;
  var o = vec4<f32>(0.0);
  for (var j = 0u; j < nv; j++) {
    let ml = part_ml[b + j];
    let a = exp(ml.x - M);
    L += a * ml.y;
    o += a * part_o[(b + j) * pc.D4 + d4];
  }
  out_store(t, o * (1.0 / L));
}
