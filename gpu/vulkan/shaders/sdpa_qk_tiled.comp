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
// memory. Rows past S*G and keys past ctx load a clamped, valid row and are not stored.
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

const uint WG = 256u;  // = Dispatch::workgroup (reference/sdpa.cpp kTiledWg)
const uint TM = 128u;  // rows a tile (kTiledRows)
const uint TN = 64u;   // keys a tile (kTiledCols)
const uint KD4 = 4u;   // texels of D a stage
const uint QP = TM / 4u + 1u, KP = TN / 4u + 1u;  // row pitches in vec4s, padded against bank conflicts
const float MASKED = -1.0e30;  // as in sdpa_qk_naive

shared vec4 qs[KD4 * 4u * QP];  // [dim][row / 4][row % 4]
shared vec4 ks[KD4 * 4u * KP];  // [dim][key / 4][key % 4]

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (w >= pc.ctiles * pc.rtiles * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint l = gl_LocalInvocationIndex, tx = l % 16u, ty = l / 16u;
  uint ct = w % pc.ctiles, rest = w / pc.ctiles, rt = rest % pc.rtiles, kvh = rest / pc.rtiles;
  uint G = pc.Hq / pc.Hkv, rows = pc.S * G, r0 = rt * TM, c0 = ct * TN;
  uint s_last = (min(r0 + TM, rows) - 1u) / G;
  bool skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s_last;  // uniform in the workgroup

  vec4 acc[8];  // acc[i][j]: row 4ty + i (i < 4) or TM/2 + 4ty + i - 4, key 4tx + j
  for (uint i = 0u; i < 8u; ++i) acc[i] = vec4(0.0);
  for (uint d0 = 0u; d0 < pc.D4 && !skip; d0 += KD4) {
    // Texel e % KD4 of tile row e / KD4: consecutive invocations read consecutive texels of a row.
    for (uint e = l; e < TM * KD4; e += WG) {
      uint i = e / KD4, d4 = d0 + e % KD4, r = min(r0 + i, rows - 1u);
      vec4 v = d4 < pc.D4 ? q_at4(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + d4)) : vec4(0.0);
      uint at = (e % KD4) * 4u * QP + i / 4u;
      qs[at][i % 4u] = v.x;
      qs[at + QP][i % 4u] = v.y;
      qs[at + 2u * QP][i % 4u] = v.z;
      qs[at + 3u * QP][i % 4u] = v.w;
    }
    for (uint e = l; e < TN * KD4; e += WG) {
      uint j = e / KD4, d4 = d0 + e % KD4, c = min(c0 + j, pc.ctx - 1u);
      vec4 v = d4 < pc.D4 ? TO_VEC4(k_cache[(c * pc.Hkv + kvh) * pc.D4 + d4]) : vec4(0.0);
      uint at = (e % KD4) * 4u * KP + j / 4u;
      ks[at][j % 4u] = v.x;
      ks[at + KP][j % 4u] = v.y;
      ks[at + 2u * KP][j % 4u] = v.z;
      ks[at + 3u * KP][j % 4u] = v.w;
    }
    barrier();
    for (uint d = 0u; d < KD4 * 4u; ++d) {
      vec4 a0 = qs[d * QP + ty], a1 = qs[d * QP + TM / 8u + ty], b = ks[d * KP + tx];
      acc[0] += a0.x * b;
      acc[1] += a0.y * b;
      acc[2] += a0.z * b;
      acc[3] += a0.w * b;
      acc[4] += a1.x * b;
      acc[5] += a1.y * b;
      acc[6] += a1.z * b;
      acc[7] += a1.w * b;
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; ++i) {
    uint r = r0 + (i / 4u) * (TM / 2u) + 4u * ty + i % 4u;
    if (r >= rows) continue;
    uint s = r / G, row = ((kvh * G + r % G) * pc.S + s) * pc.ctx;
    for (uint j = 0u; j < 4u; ++j) {
      uint c = c0 + 4u * tx + j;
      if (c < pc.ctx) scores[row + c] = c > pc.pos + s ? MASKED : pc.scale * acc[i][j];
    }
  }
}
