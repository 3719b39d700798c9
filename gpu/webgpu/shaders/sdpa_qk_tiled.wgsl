// sdpa QK (tiled): the scores of sdpa_qk_naive, a 4x4 register tile per invocation: for the
// invocation's (h, query tile s0 = 4*st, key tile c0 = 4*ct), i, j in [0, 4),
//   scores[h, s0+i, c0+j] = scale * dot(q[s0+i,h,:], k_cache[c0+j,kvh,:])   if c0+j <= pos + s0+i,
//                         = MASKED                                         otherwise,
// with vec4 dot products over D (D % 4 == 0: q is read 4 head dims at a time, k_cache binds as a
// vec4 array). Queries past S
// and keys past ctx load a clamped, valid row and are not stored: the loads need no branches.
// With SKIP_MASKED_TILES = 1 a tile entirely above the causal diagonal (c0 > pos + s0 + 3) skips
// its contraction: the store masks every one of its scores anyway, so the output is bit-identical.
// Bindings (gpu/webgpu/PROTOCOL.md): q is read through its accessors (TS_INPUT, gpu/ACCESSORS.md:
// any layout); each storage array binds the tensor of its name; the uniform block `pc` takes the
// plan's uniforms by member name; SKIP_MASKED_TILES comes from the plan.
TS_INPUT(q, 0)
@group(0) @binding(1) var<storage, read> k_cache : array<vec4<DTYPE>>;
@group(0) @binding(2) var<storage, read_write> scores : array<f32>;
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, scale: f32 }
@group(0) @binding(3) var<uniform> pc : Params;

const MASKED = -1.0e30;  // as in sdpa_qk_naive

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let c_tiles = (pc.ctx + 3u) / 4u;
  let s_tiles = (pc.S + 3u) / 4u;
  let ct = id % c_tiles;
  let rest = id / c_tiles;
  let st = rest % s_tiles;
  let h = rest / s_tiles;
  let s0 = st * 4u;
  let c0 = ct * 4u;
  let kvh = h / (pc.Hq / pc.Hkv);
  var qb: array<u32, 4>;
  var kb: array<u32, 4>;
  for (var i = 0u; i < 4u; i++) {
    qb[i] = (min(s0 + i, pc.S - 1u) * pc.Hq + h) * pc.D4;  // in units of 4 head dims
    kb[i] = (min(c0 + i, pc.ctx - 1u) * pc.Hkv + kvh) * pc.D4;
  }
  var acc: array<vec4<f32>, 4>;  // acc[i][j]: query s0+i, key c0+j; zero-initialised
  let skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s0 + 3u;
  for (var d4 = 0u; d4 < pc.D4 && !skip; d4++) {
    var kv: array<vec4<f32>, 4>;
    for (var j = 0u; j < 4u; j++) {
      kv[j] = vec4<f32>(k_cache[kb[j] + d4]);
    }
    for (var i = 0u; i < 4u; i++) {
      let qv = q_at4(4u * (qb[i] + d4));
      acc[i] += vec4<f32>(dot(qv, kv[0]), dot(qv, kv[1]), dot(qv, kv[2]), dot(qv, kv[3]));
    }
  }
  for (var i = 0u; i < 4u && s0 + i < pc.S; i++) {
    let s = s0 + i;
    let row = (h * pc.S + s) * pc.ctx;
    for (var j = 0u; j < 4u && c0 + j < pc.ctx; j++) {
      let c = c0 + j;
      scores[row + c] = select(pc.scale * acc[i][j], MASKED, c > pc.pos + s);
    }
  }
}
