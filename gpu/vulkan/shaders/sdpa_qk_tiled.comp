// sdpa QK (tiled): the scores of sdpa_qk_naive, a 4x4 register tile per invocation: for the
// invocation's (h, query tile s0 = 4*st, key tile c0 = 4*ct), i, j in [0, 4),
//   scores[h, s0+i, c0+j] = scale * dot(q[s0+i,h,:], k_cache[c0+j,kvh,:])   if c0+j <= pos + s0+i,
//                         = MASKED                                         otherwise,
// with vec4 dot products over D (D % 4 == 0: k_cache binds as a vec4 array, q, in any layout
// (gpu/ACCESSORS.md), is read 4 head dims at a time). Queries past S and keys past ctx load a
// clamped, valid row and are not stored: the loads need no branches.
// With SKIP_MASKED_TILES = 1 a tile entirely above the causal diagonal (c0 > pos + s0 + 3) skips
// its contraction: the store masks every one of its scores anyway, so the output is bit-identical.
TS_INPUT(q, 0)
layout(std430, binding = 1) readonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 2) writeonly buffer SC { float scores[]; };
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; float scale; } pc;

const float MASKED = -1.0e30;  // as in sdpa_qk_naive

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  uint c_tiles = (pc.ctx + 3) / 4, s_tiles = (pc.S + 3) / 4;
  uint ct = id % c_tiles, rest = id / c_tiles, st = rest % s_tiles, h = rest / s_tiles;
  uint s0 = st * 4, c0 = ct * 4, kvh = h / (pc.Hq / pc.Hkv);
  uint qb[4], kb[4];
  for (uint i = 0; i < 4; ++i) {
    qb[i] = (min(s0 + i, pc.S - 1) * pc.Hq + h) * pc.D4;
    kb[i] = (min(c0 + i, pc.ctx - 1) * pc.Hkv + kvh) * pc.D4;
  }
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));  // acc[i][j]: query s0+i, key c0+j
  bool skip = SKIP_MASKED_TILES != 0 && c0 > pc.pos + s0 + 3;
  for (uint d4 = 0; d4 < pc.D4 && !skip; ++d4) {
    vec4 kv[4];
    for (uint j = 0; j < 4; ++j) kv[j] = TO_VEC4(k_cache[kb[j] + d4]);
    for (uint i = 0; i < 4; ++i) {
      vec4 qv = q_at4(4u * (qb[i] + d4));
      acc[i] += vec4(dot(qv, kv[0]), dot(qv, kv[1]), dot(qv, kv[2]), dot(qv, kv[3]));
    }
  }
  for (uint i = 0; i < 4 && s0 + i < pc.S; ++i) {
    uint s = s0 + i, row = (h * pc.S + s) * pc.ctx;
    for (uint j = 0; j < 4 && c0 + j < pc.ctx; ++j) {
      uint c = c0 + j;
      scores[row + c] = c > pc.pos + s ? MASKED : pc.scale * acc[i][j];
    }
  }
}
