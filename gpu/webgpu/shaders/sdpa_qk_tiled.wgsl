// sdpa QK (tiled): the scores of sdpa_qk_naive as a tiled GEMM per kv head; the algorithm, tiles and
// order of operations of gpu/vulkan/shaders/sdpa_qk_tiled.comp, which states them. Rows r = s*G + g
// of kv head kvh (head kvh*G + g at position s) share each K tile; workgroup (key tile ct, row tile
// rt, kvh) of WG = 256 computes TM = 128 rows x TN = 64 keys, D in stages of KD4 texels through
// shared memory, invocation (tx, ty) rows 4ty + i and TM/2 + 4ty + i, keys 4tx + j, float32:
//   scores[h, s, c] = scale * dot(q[s,h,:], k_cache[c,kvh,:]) if c <= pos + s, else MASKED.
// SKIP_MASKED_TILES = 1: a tile entirely above the causal diagonal skips its contraction (its
// scores are all MASKED anyway). Every score is stored. Barriers are in uniform control flow.
// Bindings (gpu/webgpu/PROTOCOL.md): q and k_cache are read through their accessors (TS_INPUT,
// gpu/ACCESSORS.md); each storage array binds the tensor of its name; the uniform block `pc` takes
// the plan's uniforms by member name; SKIP_MASKED_TILES comes from the plan.
TS_INPUT(q, 0)
TS_INPUT(k_cache, 1)
@group(0) @binding(2) var<storage, read_write> scores : array<f32>;
struct Params { S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, scale: f32, rtiles: u32, ctiles: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

// WG = 256 (reference/sdpa.cpp kTiledWg), TM = kTiledRows, TN = kTiledCols.
const TM = 128u;
const TN = 64u;
const KD4 = 4u;
const QP = 33u;  // TM / 4 + 1: row pitches in vec4s, padded against bank conflicts
const KP = 17u;  // TN / 4 + 1
const MASKED = -1.0e30;  // as in sdpa_qk_naive

var<workgroup> qs : array<vec4<f32>, 528>;  // KD4 * 4 * QP: [dim][row / 4][row % 4]
var<workgroup> ks : array<vec4<f32>, 272>;  // KD4 * 4 * KP: [dim][key / 4][key % 4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.ctiles * pc.rtiles * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let tx = l % 16u;
  let ty = l / 16u;
  let ct = w % pc.ctiles;
  let rest = w / pc.ctiles;
  let rt = rest % pc.rtiles;
  let kvh = rest / pc.rtiles;
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let r0 = rt * TM;
  let c0 = ct * TN;
  let s_last = (min(r0 + TM, rows) - 1u) / G;
  let skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s_last;

  var acc: array<vec4<f32>, 8>;  // zero-initialised; acc[i][j]: row 4ty + i or TM/2 + 4ty + i - 4, key 4tx + j
  for (var d0 = 0u; d0 < pc.D4 && !skip; d0 += KD4) {
    for (var e = l; e < TM * KD4; e += WG) {
      let i = e / KD4;
      let d4 = d0 + e % KD4;
      let r = min(r0 + i, rows - 1u);
      var v = vec4<f32>(0.0);
      if (d4 < pc.D4) { v = q_at4(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + d4)); }
      let at = (e % KD4) * 4u * QP + i / 4u;
      qs[at][i % 4u] = v.x;
      qs[at + QP][i % 4u] = v.y;
      qs[at + 2u * QP][i % 4u] = v.z;
      qs[at + 3u * QP][i % 4u] = v.w;
    }
    for (var e = l; e < TN * KD4; e += WG) {
      let j = e / KD4;
      let d4 = d0 + e % KD4;
      let c = min(c0 + j, pc.ctx - 1u);
      var v = vec4<f32>(0.0);
      if (d4 < pc.D4) { v = k_cache_at4(4u * ((c * pc.Hkv + kvh) * pc.D4 + d4)); }
      let at = (e % KD4) * 4u * KP + j / 4u;
      ks[at][j % 4u] = v.x;
      ks[at + KP][j % 4u] = v.y;
      ks[at + 2u * KP][j % 4u] = v.z;
      ks[at + 3u * KP][j % 4u] = v.w;
    }
    workgroupBarrier();
    for (var d = 0u; d < KD4 * 4u; d++) {
      let a0 = qs[d * QP + ty];
      let a1 = qs[d * QP + TM / 8u + ty];
      let b = ks[d * KP + tx];
      acc[0] += a0.x * b;
      acc[1] += a0.y * b;
      acc[2] += a0.z * b;
      acc[3] += a0.w * b;
      acc[4] += a1.x * b;
      acc[5] += a1.y * b;
      acc[6] += a1.z * b;
      acc[7] += a1.w * b;
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 8u; i++) {
    let r = r0 + (i / 4u) * (TM / 2u) + 4u * ty + i % 4u;
    if (r >= rows) { continue; }
    let s = r / G;
    let row = ((kvh * G + r % G) * pc.S + s) * pc.ctx;
    for (var j = 0u; j < 4u; j++) {
      let c = c0 + 4u * tx + j;
      if (c < pc.ctx) { scores[row + c] = select(pc.scale * acc[i][j], MASKED, c > pc.pos + s); }
    }
  }
}
