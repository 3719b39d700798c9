// sdpa QK (tiled): the scores of sdpa_qk_naive as a tiled GEMM per kv head; the algorithm, tiles and
// order of operations of gpu/vulkan/shaders/sdpa_qk_tiled.comp, which states them. Rows r = s*G + g
// of kv head kvh (head kvh*G + g at position s) share each K tile; workgroup (key tile ct, row tile
// rt, kvh) of WG = 256 computes TM = 128 rows x TN = 64 keys, D in stages of KD4 texels through
// shared memory, invocation (tx, ty) rows 4ty + i and TM/2 + 4ty + i, keys 4tx + j, float32:
//   scores[h, s, c] = scale * dot(q[s,h,:], k_cache[c,kvh,:]) if c <= pos + s, else MASKED.
// SKIP_MASKED_TILES = 1: a tile entirely above the causal diagonal skips its contraction (its
// scores are all MASKED anyway). The next stage is fetched into registers while a stage computes.
// Every score is stored. Barriers are in uniform control flow.
// Bindings (gpu/webgpu/PROTOCOL.md): q and k_cache are read through their accessors (TS_INPUT,
// gpu/ACCESSORS.md); each storage array binds the tensor of its name; the uniform block `pc` takes
// the plan's uniforms by member name; SKIP_MASKED_TILES comes from the plan.
TS_INPUT(q, 0)
TS_INPUT(k_cache, 1)
@group(0) @binding(2) var<storage, read_write> scores : array<f32>;
struct Params { S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, scale: f32, rtiles: u32, ctiles: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

// WG = 256 (gpu/plans/sdpa.cpp kTiledWg), TM = kTiledRows, TN = kTiledCols.
const TM = 128u;
const TN = 64u;
const KD4 = 4u;
const QP = 33u;  // TM / 4 + 1: row pitches in vec4s, padded against bank conflicts
const KP = 17u;  // TN / 4 + 1
const MASKED = -1.0e30;  // as in sdpa_qk_naive

var<workgroup> qs : array<vec4<f32>, 528>;  // KD4 * 4 * QP: [dim][row / 4][row % 4]
var<workgroup> ks : array<vec4<f32>, 272>;  // KD4 * 4 * KP: [dim][key / 4][key % 4]

// No private array is indexed by a loop variable (the fetches and stores are written out, as the
// accumulators are: sdpa_tile_acc): a compiler that does not unroll such a loop keeps the array in
// local memory.
struct Tile { l: u32, kvh: u32, G: u32, rows: u32, r0: u32, c0: u32 }

// Texel e % KD4 of tile row e / KD4: zeros past D and past S*G rows; keys past ctx clamped.
fn fetch_q(k: Tile, e: u32, d0: u32) -> vec4<f32> {
  let i = e / KD4;
  let d4 = d0 + e % KD4;
  let r = k.r0 + i;
  if (d4 < pc.D4 && r < k.rows) { return q_at4(4u * (((r / k.G) * pc.Hq + k.kvh * k.G + r % k.G) * pc.D4 + d4)); }
  return vec4<f32>(0.0);
}
fn fetch_k(k: Tile, e: u32, d0: u32) -> vec4<f32> {
  let j = e / KD4;
  let d4 = d0 + e % KD4;
  let c = min(k.c0 + j, pc.ctx - 1u);
  if (d4 < pc.D4) { return k_cache_at4(4u * ((c * pc.Hkv + k.kvh) * pc.D4 + d4)); }
  return vec4<f32>(0.0);
}
fn put_q(e: u32, v: vec4<f32>) {
  let i = e / KD4;
  let at = (e % KD4) * 4u * QP + i / 4u;
  qs[at][i % 4u] = v.x;
  qs[at + QP][i % 4u] = v.y;
  qs[at + 2u * QP][i % 4u] = v.z;
  qs[at + 3u * QP][i % 4u] = v.w;
}
fn put_k(e: u32, v: vec4<f32>) {
  let j = e / KD4;
  let at = (e % KD4) * 4u * KP + j / 4u;
  ks[at][j % 4u] = v.x;
  ks[at + KP][j % 4u] = v.y;
  ks[at + 2u * KP][j % 4u] = v.z;
  ks[at + 3u * KP][j % 4u] = v.w;
}
fn put_score(row: u32, s: u32, c: u32, x: f32) {
  if (c < pc.ctx) { scores[row + c] = select(pc.scale * x, MASKED, c > pc.pos + s); }
}
// Row r0 + i of the tile against keys c0 + 4tx + j, j < 4.
fn store(k: Tile, i: u32, tx: u32, a: vec4<f32>) {
  let r = k.r0 + i;
  if (r >= k.rows) { return; }
  let s = r / k.G;
  let row = ((k.kvh * k.G + r % k.G) * pc.S + s) * pc.ctx;
  let c = k.c0 + 4u * tx;
  put_score(row, s, c, a.x);
  put_score(row, s, c + 1u, a.y);
  put_score(row, s, c + 2u, a.z);
  put_score(row, s, c + 3u, a.w);
}
#include "sdpa_tile_acc.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.ctiles * pc.rtiles * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let tx = l % 16u;
  let ty = l / 16u;
  let ct = w % pc.ctiles;
  let rest = w / pc.ctiles;
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let r0 = (rest % pc.rtiles) * TM;
  let c0 = ct * TN;
  // Derived from l, k is not uniform for the uniformity analysis: the barriers' loop uses the rest.
  let k = Tile(l, rest / pc.rtiles, G, rows, r0, c0);
  let s_last = (min(r0 + TM, rows) - 1u) / G;
  let skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s_last;
  let busy = r0 + 4u * ty < rows;  // this invocation has a row to compute (decode: few do)

  // Rows 4ty + i and TM/2 + 4ty + i (sdpa_tile_acc.wgsl); lane j: key 4tx + j.
  // The next stage, fetched into registers while this one computes (TM*KD4 = 2 WG, TN*KD4 = WG).
  var q0 = vec4<f32>(0.0);
  var q1 = vec4<f32>(0.0);
  var k0 = vec4<f32>(0.0);
  if (!skip) {
    q0 = fetch_q(k, l, 0u);
    q1 = fetch_q(k, l + WG, 0u);
    k0 = fetch_k(k, l, 0u);
  }
  for (var d0 = 0u; d0 < pc.D4 && !skip; d0 += KD4) {
    put_q(l, q0);
    put_q(l + WG, q1);
    put_k(l, k0);
    workgroupBarrier();
    if (d0 + KD4 < pc.D4) {
      q0 = fetch_q(k, l, d0 + KD4);
      q1 = fetch_q(k, l + WG, d0 + KD4);
      k0 = fetch_k(k, l, d0 + KD4);
    }
    for (var d = 0u; d < KD4 * 4u && busy; d++) {
      tile_fma(qs[d * QP + ty], qs[d * QP + TM / 8u + ty], ks[d * KP + tx]);
    }
    workgroupBarrier();
  }
  tile_store(k, ty, tx);
}
