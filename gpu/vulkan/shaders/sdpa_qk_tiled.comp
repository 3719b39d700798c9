// sdpa QK (tiled): the scores of sdpa_qk_naive as a tiled GEMM per kv head. The query rows of kv
// head kvh are r = s*G + g (G = Hq / Hkv: head h = kvh*G + g at position s), so the G heads that
// share a kv head share every K tile. Workgroup (key tile ct, row tile rt, kvh), WG = 256
// invocations, computes rows r0 = TM*rt .. +TM against keys c0 = TN*ct .. +TN:
//   scores[h, s, c] = scale * dot(q[s,h,:], k_cache[c,kvh,:])   if c <= pos + s,
//                   = MASKED                                     otherwise.
// The contraction over D goes in stages of KD4 texels (4 head dims each, D % 4 == 0): the
// workgroup loads the stage's Q and K tiles into shared memory once (float32, zero past D), then
// invocation (tx, ty) = (l % 16, l / 16) accumulates rows 4ty + i and TM/2 + 4ty + i (i < 4)
// against keys 4tx + j (j < 4) in registers: 32 float32 FMAs for every 3 vec4 reads of shared
// memory. The next stage's texels are fetched into registers while a stage computes. Rows past
// S*G load zeros, keys past ctx a clamped, valid row; neither is stored.
// With SKIP_MASKED_TILES = 1 a tile entirely above the causal diagonal (c0 > pos + its last row's
// s) skips its contraction: the store masks every one of its scores anyway (bit-identical).
// Every score of the tile is stored (the softmax reads none past the causal limit, but the scratch
// is checked as fully written).
TS_INPUT(q, 0)
layout(std430, binding = 1) readonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 2) writeonly buffer SC { float scores[]; };
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; float scale; uint rtiles; uint ctiles;
} pc;

const uint WG = 256u;  // = Dispatch::workgroup (gpu/plans/sdpa.cpp kTiledWg)
const uint TM = 128u;  // rows a tile (kTiledRows)
const uint TN = 64u;   // keys a tile (kTiledCols)
const uint KD4 = 4u;   // texels of D a stage
const uint QP = TM / 4u + 1u, KP = TN / 4u + 1u;  // row pitches in vec4s, padded against bank conflicts
const float MASKED = -1.0e30;  // as in sdpa_qk_naive

shared vec4 qs[KD4 * 4u * QP];  // [dim][row / 4][row % 4]
shared vec4 ks[KD4 * 4u * KP];  // [dim][key / 4][key % 4]

// No private array is indexed by a loop variable (the fetches and stores are written out, as the
// accumulators are: sdpa_tile_acc): a compiler that does not unroll such a loop keeps the array in
// local memory.
uint l, kvh, G, rows, r0, c0;

// Texel e % KD4 of tile row e / KD4: consecutive invocations read consecutive texels of a row.
// Past D, and rows past S*G, are zeros; keys past ctx load a clamped, valid row.
vec4 fetch_q(uint e, uint d0) {
  uint i = e / KD4, d4 = d0 + e % KD4, r = r0 + i;
  return d4 < pc.D4 && r < rows ? q_at4(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + d4)) : vec4(0.0);
}
vec4 fetch_k(uint e, uint d0) {
  uint j = e / KD4, d4 = d0 + e % KD4, c = min(c0 + j, pc.ctx - 1u);
  return d4 < pc.D4 ? TO_VEC4(k_cache[(c * pc.Hkv + kvh) * pc.D4 + d4]) : vec4(0.0);
}
void put_q(uint e, vec4 v) {
  uint i = e / KD4, at = (e % KD4) * 4u * QP + i / 4u;
  qs[at][i % 4u] = v.x;
  qs[at + QP][i % 4u] = v.y;
  qs[at + 2u * QP][i % 4u] = v.z;
  qs[at + 3u * QP][i % 4u] = v.w;
}
void put_k(uint e, vec4 v) {
  uint j = e / KD4, at = (e % KD4) * 4u * KP + j / 4u;
  ks[at][j % 4u] = v.x;
  ks[at + KP][j % 4u] = v.y;
  ks[at + 2u * KP][j % 4u] = v.z;
  ks[at + 3u * KP][j % 4u] = v.w;
}
void put_score(uint row, uint s, uint c, float x) {
  if (c < pc.ctx) scores[row + c] = c > pc.pos + s ? MASKED : pc.scale * x;
}
// Row r0 + i of the tile against keys c0 + 4tx + j, j < 4.
void store(uint i, uint tx, vec4 a) {
  uint r = r0 + i;
  if (r >= rows) return;
  uint s = r / G, row = ((kvh * G + r % G) * pc.S + s) * pc.ctx, c = c0 + 4u * tx;
  put_score(row, s, c, a.x);
  put_score(row, s, c + 1u, a.y);
  put_score(row, s, c + 2u, a.z);
  put_score(row, s, c + 3u, a.w);
}
#include "sdpa_tile_acc.glsl"

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (w >= pc.ctiles * pc.rtiles * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  l = ts_local_index();
  uint tx = l % 16u, ty = l / 16u;
  uint ct = w % pc.ctiles, rest = w / pc.ctiles, rt = rest % pc.rtiles;
  kvh = rest / pc.rtiles;
  G = pc.Hq / pc.Hkv;
  rows = pc.S * G;
  r0 = rt * TM;
  c0 = ct * TN;
  uint s_last = (min(r0 + TM, rows) - 1u) / G;
  bool skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s_last;  // uniform in the workgroup
  bool busy = r0 + 4u * ty < rows;  // this invocation has a row to compute (decode: few do)

  // Rows 4ty + i and TM/2 + 4ty + i (sdpa_tile_acc.glsl); lane j: key 4tx + j.
  // The next stage, fetched into registers while this one computes (TM*KD4 = 2 WG, TN*KD4 = WG).
  vec4 q0 = vec4(0.0), q1 = vec4(0.0), k0 = vec4(0.0);
  if (!skip) {
    q0 = fetch_q(l, 0u);
    q1 = fetch_q(l + WG, 0u);
    k0 = fetch_k(l, 0u);
  }
  for (uint d0 = 0u; d0 < pc.D4 && !skip; d0 += KD4) {
    put_q(l, q0);
    put_q(l + WG, q1);
    put_k(l, k0);
    barrier();
    if (d0 + KD4 < pc.D4) {
      q0 = fetch_q(l, d0 + KD4);
      q1 = fetch_q(l + WG, d0 + KD4);
      k0 = fetch_k(l, d0 + KD4);
    }
    for (uint d = 0u; d < KD4 * 4u && busy; ++d) {
      tile_fma(qs[d * QP + ty], qs[d * QP + TM / 8u + ty], ks[d * KP + tx]);
    }
    barrier();
  }
  tile_store(ty, tx);
}
