// sdpa split (flash-decoding), step 1 of 2 for decode (S = 1, G = Hq / Hkv <= QD, G * D4 <= QSTAGE,
// D4 <= DMAX: the plan picks it, reference/sdpa.cpp): the function, scratch layout and order of
// operations of sdpa_split_partial.comp (read its header), bit for bit, with the chunk's K and V
// staged through shared memory. Workgroup (chunk j, kv head kvh) takes the G queries of that kv
// head (one position: every query sees the same keys, n = min(chunk, pos + 1 - c0)).
// Why staged: the partial's one-key-per-invocation QK reads 32 rows of the cache per warp load
// (8 bytes of each), and its V loop keeps 8 loads in flight per invocation: on an H100 that held
// ctx 32768 decode at 24% of copy bandwidth. Here the chunk's cached rows come in tiles of TT
// texels: consecutive invocations load consecutive texels of a row (whole rows, coalesced), TL
// loads each in flight, one tile ahead of its use (R in main). QK then takes a key and every qs-th
// query per invocation from the tile (rows padded to D4 + 1 texels: no bank conflicts), in
// head-dim order; AV one head-dim texel and every qv-th query, keys in key order, the weights from
// shared memory.
// This step's key and value (c = pos, from k and v: the caches are written by the combine) are
// staged beside the queries and come last, as in the partial.
// Barriers are in uniform control flow: every loop bound around one is workgroup-uniform.
TS_INPUT(q, 0)
TS_INPUT(k, 1)
TS_INPUT(v, 2)
layout(std430, binding = 3) readonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 4) readonly buffer VC { DTYPE4 v_cache[]; };
layout(std430, binding = 5) writeonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 6) writeonly buffer PML { vec2 part_ml[]; };
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; float scale; uint chunk; uint chunks; uint qblocks; uint qblock;
} pc;

const uint WG = 64u;    // = Dispatch::workgroup (reference/sdpa.cpp kSplitWg)
const uint QD = 8u;     // the most queries of a block (kSplitDecodeQueries)
const uint DMAX = 64u;  // the longest head dim, in texels (kSplitDecodeTexels)
const uint TT = 1088u;  // tile texels: 32 rows of 32 texels (+ 1 of padding), 16 of 64, ...
const uint TL = 17u;    // = TT / WG: texels an invocation stages
const float MASKED = -1.0e30;

shared float sc[SCMAX];            // [query][key], row stride chunk: scores, then weights
shared vec4 qsh[QSTAGE];           // [query][texel]
shared DTYPE4 tile[TT];           // [key][texel], row stride D4 + 1
shared vec4 fk[DMAX], fv[DMAX];    // this step's key and value rows
shared float red[WG];
shared float stat_m[QD], stat_l[QD];

uint kvh, nq;

uint row_of(uint i) { return kvh * (pc.Hq / pc.Hkv) + min(i, nq - 1u); }
uint cached_at(uint c, uint d4) { return (c * pc.Hkv + kvh) * pc.D4 + d4; }

// Tile texels in flight, R[TL], in main: invocation l holds texel ld = l % D4 of rows lk + i * rows
// (lk = l / D4, rows = WG / D4, i < TL) of rows [c, c + n) of a cache (cached keys, n >= 1,
// n <= TL * rows, n * (D4 + 1) <= TT). Loaded one tile ahead of their use: while a tile is used, the
// next one's loads (the next K tile, or after the last the first V tile, held through the softmax)
// are in flight. R is a local array of main indexed only in loops of straight-line bodies (these
// macros), so that it stays in registers: held in a global (private) array or filled in a loop
// with a branch carried between iterations it went to local memory, each load waiting for the
// last (on an H100: ctx 32768 decode 590 to 1160 us, against 188 for sdpa_split_partial).
#define LOAD_TILE(buf, c, n)                                                           \
  for (uint i = 0u; i < TL; ++i) {                                                    \
    uint key = lk + i * rows;                                                         \
    R[i] = key < (n) ? buf[cached_at((c) + min(key, (n) - 1u), ld)] : DTYPE4(0);      \
  }
#define STORE_TILE(n)                                                                  \
  for (uint i = 0u; i < TL; ++i) {                                                    \
    uint key = lk + i * rows;                                                         \
    if (key < (n)) tile[key * (D4 + 1u) + ld] = R[i];                                 \
  }

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = gl_LocalInvocationIndex;
  if (w >= pc.chunks * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint j = w % pc.chunks, D4 = pc.D4;
  kvh = w / pc.chunks;
  nq = pc.Hq / pc.Hkv;
  uint c0 = j * pc.chunk, n = pc.pos + 1u, nk = n > c0 ? min(pc.chunk, n - c0) : 0u;
  uint nc = pc.pos > c0 ? min(nk, pc.pos - c0) : 0u;  // cached keys, then this step's (nk - nc <= 1)
  uint rows = WG / D4, lk = l < rows * D4 ? l / D4 : 1u << 30, ld = l % D4;  // 2^30: stages nothing
  uint tk = min(min(TT / (D4 + 1u), pc.chunk), TL * rows);  // keys a tile holds
  uint nt = (nc + tk - 1u) / tk;                            // tiles of K, then as many of V
  uint qs = clamp(WG / tk, 1u, nq);  // QK: invocation x takes key x % tn of the tile, queries x / tn + a * qs

  DTYPE4 R[TL];
  uint rn = min(tk, nc);
  if (rn > 0u) LOAD_TILE(k_cache, c0, rn)
  for (uint x = l; x < nq * D4; x += WG) qsh[x] = q_at4(4u * (row_of(x / D4) * D4 + x % D4));
  if (nk > nc)
    for (uint x = l; x < D4; x += WG) {
      fk[x] = k_at4(4u * (kvh * D4 + x));
      fv[x] = v_at4(4u * (kvh * D4 + x));
    }
  for (uint t = 0u; t < nt; ++t) {
    uint t0 = t * tk, tn = min(tk, nc - t0);
    barrier();  // the previous tile was read
    STORE_TILE(rn)
    barrier();
    if (t + 1u < nt) {
      rn = min(tk, nc - t0 - tk);
      LOAD_TILE(k_cache, c0 + t0 + tk, rn)
    } else {
      rn = min(tk, nc);
      LOAD_TILE(v_cache, c0, rn)
    }
    for (uint x = l; x < qs * tn; x += WG) {
      uint c = x % tn, g = x / tn;
      float acc[QD];
      for (uint a = 0u; a < QD; ++a) acc[a] = 0.0;
      for (uint d = 0u; d < D4; ++d) {
        vec4 kt = TO_VEC4(tile[c * (D4 + 1u) + d]);
        for (uint a = 0u; a < QD; ++a)
          if (g + a * qs < nq) acc[a] += dot(qsh[(g + a * qs) * D4 + d], kt);
      }
      for (uint a = 0u; a < QD; ++a)
        if (g + a * qs < nq) sc[(g + a * qs) * pc.chunk + t0 + c] = pc.scale * acc[a];
    }
  }
  barrier();  // q and this step's rows staged (also when nc == 0)
  if (nk > nc && l < nq) {
    float acc = 0.0;
    for (uint d = 0u; d < D4; ++d) acc += dot(qsh[l * D4 + d], fk[d]);
    sc[l * pc.chunk + nc] = pc.scale * acc;
  }
  barrier();

  uint P = WG / pc.qblock, qi = l / P, part = l % P, ns = qi < nq ? nk : 0u;
  float m = MASKED;
  for (uint c = part; c < ns; c += P) m = max(m, sc[qi * pc.chunk + c]);
  red[l] = m;
  barrier();
  if (part == 0u && qi < QD) {
    for (uint k = 1u; k < P; ++k) m = max(m, red[l + k]);
    stat_m[qi] = m;
  }
  barrier();
  m = qi < QD ? stat_m[qi] : MASKED;
  float sum = 0.0;
  for (uint c = part; c < ns; c += P) {
    float e = exp(sc[qi * pc.chunk + c] - m);
    sc[qi * pc.chunk + c] = e;
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  barrier();
  if (part == 0u && qi < QD) {
    for (uint k = 1u; k < P; ++k) sum += red[l + k];
    stat_l[qi] = sum;
  }

  uint qv = clamp(WG / D4, 1u, nq), d4 = l % D4, g = l / D4;
  vec4 acc[QD];
  for (uint a = 0u; a < QD; ++a) acc[a] = vec4(0.0);
  for (uint t = 0u; t < nt; ++t) {
    uint t0 = t * tk, tn = min(tk, nc - t0);
    barrier();  // the weights are written; the previous tile was read
    STORE_TILE(rn)
    barrier();
    if (t + 1u < nt) {
      rn = min(tk, nc - t0 - tk);
      LOAD_TILE(v_cache, c0 + t0 + tk, rn)
    }
    if (g < qv)
      for (uint c = 0u; c < tn; ++c) {
        vec4 vt = TO_VEC4(tile[c * (D4 + 1u) + d4]);
        for (uint a = 0u; a < QD; ++a)
          if (g + a * qv < nq) acc[a] += sc[(g + a * qv) * pc.chunk + t0 + c] * vt;
      }
  }
  barrier();  // the weights are written (also when nc == 0)
  if (g < qv) {
    for (uint a = 0u; a < QD; ++a) {
      uint i = g + a * qv;
      if (i < nq) {
        if (nk > nc) acc[a] += sc[i * pc.chunk + nc] * fv[d4];
        part_o[(row_of(i) * pc.chunks + j) * D4 + d4] = acc[a];
      }
    }
  }
  if (l < nq) part_ml[row_of(l) * pc.chunks + j] = vec2(stat_m[l], stat_l[l]);
}
