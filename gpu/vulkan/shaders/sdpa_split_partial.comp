// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context. Decode (a kv head's rows <= 16, S <= 4, D <= 128) runs
// sdpa_decode_partial.comp instead, which reached 2x this kernel's speed (the measurements below are
// of this kernel, from when it ran decode too). Workgroup (query block b, chunk j, kv head kvh), b fastest so that the
// blocks reading one chunk run together (prefill: the chunk's K/V is then read from L2 once): its
// queries are rows qi = qblock*b + i, i < qblock (and < S * G, G = Hq / Hkv) of this kv head,
// qi = s*G + g: head h = kvh*G + g at position s. All of them share every K and V load of the
// chunk (GQA decode: the G heads; prefill: also consecutive positions, 32 queries a block). Keys c
// in [c0, c0 + chunk), c0 = j * chunk; query (h, s) sees c <= pos + s and skips the rest (weight 0
// exactly, never an exp). Per query:
//   m = max_c s_c (MASKED if it sees none),  e_c = exp(s_c - m),  l = sum_c e_c,
//   part_o[row, j, :] = sum_c e_c v[c, kvh, :],  part_ml[row, j] = (m, l),  row = s*Hq + h,
// everything float32 (float16 / bfloat16 only in storage). A chunk past a query's limit still
// writes (MASKED, 0) and zeros, so the scratch is fully written (sdpa_split_combine never reads it).
// The updated caches are never read: keys c < pos come from the caches, keys c >= pos (this step's
// rows) straight from k and v (the same values: the cache store is exact), and sdpa_split_combine
// writes those rows into the caches. So no dispatch of its own updates the caches (one dispatch
// and one barrier fewer per step).
// 1. Scores: an invocation takes one key and every qs-th query of the block (qs = 64 / chunk, at
//    least 1, at most the block: every invocation busy when chunks are short; at least nq / QPT, so
//    that it holds at most QPT queries' sums: larger blocks re-read the key from cache), holds KB
//    texels of the key's cached row at once (KB loads in flight: decode is bound by memory latency)
//    and adds their dot products with each query in head-dim order. The queries are staged in
//    shared memory, in slices of the head dim when they do not fit whole (long heads, prefill).
// 2. Max and sum per query: P = 64 / qblock invocations per query (sdpa_chunk_softmax.glsl).
// 3. Weighted V: an invocation takes one head-dim texel and every qv-th query (qv = 64 / D4, at
//    least 1, at most the block, at least nq / QPT): consecutive invocations read consecutive
//    texels of a V row (coalesced), KB cached keys' texels at once, each feeding all the
//    invocation's queries; every query adds its keys in key order. This step's keys (from k, v)
//    come one at a time, last.
// The plan sizes the shared arrays: SCMAX >= qblock * chunk scores (decode gets a small one: more
// workgroups fit on a multiprocessor), QSTAGE >= 32 staged query texels. QPT and KB are small: the
// unrolled QPT x KB loops' size is what a CPU device's compile time grows with (lavapipe compiles at
// the first dispatch), and on a GPU a larger KB was slower. This kernel's time is mostly
// instructions and their latency, not memory: staging K and V through shared memory, keeping the
// queries in registers, or unrolling further were all slower or no faster (the experiments and
// their times: PERFORMANCE.md).
// Barriers are in uniform control flow: every loop bound around a barrier is workgroup-uniform.
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

const uint WG = 64u;   // = Dispatch::workgroup (gpu/plans/sdpa.cpp kSplitWg)
const uint QMAX = 32u; // the longest query block; qblock is a power of two <= 32
const uint QPT = 4u;   // queries an invocation accumulates
const uint KB = 8u;    // K / V row texels loaded before their first use (loads in flight)
const float MASKED = -1.0e30;

shared float sc[SCMAX];  // [query][key], row stride chunk: scores, then weights
shared vec4 qsh[QSTAGE];  // [query][texel of the slice]
shared float red[WG];
shared float stat_m[QMAX], stat_l[QMAX];

uint G, q0, nq, c0, kvh;

// Query i of the block: its out row and how many keys of this chunk it sees.
uint row_of(uint i) {
  uint qi = q0 + min(i, nq - 1u);
  return (qi / G) * pc.Hq + kvh * G + qi % G;
}
uint seen_of(uint i) {
  uint n = pc.pos + (q0 + min(i, nq - 1u)) / G + 1u;
  return n > c0 ? min(pc.chunk, n - c0) : 0u;
}
// Texel d4 of this step's key c >= pos in k / v; earlier keys' in the caches (row c of kvh).
uint fresh_at(uint c, uint d4) { return 4u * (((c - pc.pos) * pc.Hkv + kvh) * pc.D4 + d4); }
uint cached_at(uint c, uint d4) { return (c * pc.Hkv + kvh) * pc.D4 + d4; }
float score(uint i, uint c) { return sc[i * pc.chunk + c]; }
void set_weight(uint i, uint c, float e) { sc[i * pc.chunk + c] = e; }
// chunk_softmax's runs: single invocations (this kernel assumes no subgroup size).
const uint RUN = 1u;
float run_max(float x) { return x; }
float run_sum(float x) { return x; }
#include "sdpa_chunk_softmax.glsl"

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = ts_local_index();
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint b = w % pc.qblocks, rest = w / pc.qblocks, j = rest % pc.chunks;
  kvh = rest / pc.chunks;
  G = pc.Hq / pc.Hkv;
  q0 = b * pc.qblock;
  nq = min(pc.qblock, pc.S * G - q0);
  c0 = j * pc.chunk;
  uint nk = seen_of(nq - 1u);  // the last query sees furthest
  uint qs = max(clamp(WG / pc.chunk, 1u, nq), (nq + QPT - 1u) / QPT), ds = min(QSTAGE / nq, pc.D4);
  // Slices outside, keys inside: each slice is staged once; a key's partial sums wait in sc between
  // slices (its invocation is the same in every slice), scaled and masked after the last.
  for (uint s0 = 0u; s0 < (nk > 0u ? pc.D4 : 0u); s0 += ds) {
    uint sn = min(ds, pc.D4 - s0);
    bool last = s0 + sn == pc.D4;
    barrier();  // the previous slice was read
    for (uint x = l; x < nq * sn; x += WG) qsh[x] = q_at4(4u * (row_of(x / sn) * pc.D4 + s0 + x % sn));
    barrier();
    for (uint t = l; t < qs * nk; t += WG) {
      uint c = t % nk, g = t / nk;
      float acc[QPT];
      for (uint a = 0u; a < QPT; ++a) acc[a] = s0 > 0u && g + a * qs < nq ? sc[(g + a * qs) * pc.chunk + c] : 0.0;
      if (c0 + c >= pc.pos) {
        for (uint d = 0u; d < sn; ++d) {
          vec4 kt = k_at4(fresh_at(c0 + c, s0 + d));
          for (uint a = 0u; a < QPT; ++a)
            if (g + a * qs < nq) acc[a] += dot(qsh[(g + a * qs) * sn + d], kt);
        }
      } else {
        uint kb = cached_at(c0 + c, s0);
        for (uint d0 = 0u; d0 < sn; d0 += KB) {
          vec4 kk[KB];
          for (uint u = 0u; u < KB; ++u) kk[u] = d0 + u < sn ? TO_VEC4(k_cache[kb + d0 + u]) : vec4(0.0);
          for (uint a = 0u; a < QPT; ++a)
            if (g + a * qs < nq)
              for (uint u = 0u; u < KB; ++u)
                if (d0 + u < sn) acc[a] += dot(qsh[(g + a * qs) * sn + d0 + u], kk[u]);
        }
      }
      for (uint a = 0u; a < QPT; ++a) {
        uint i = g + a * qs;
        if (i < nq) sc[i * pc.chunk + c] = !last ? acc[a] : c < seen_of(i) ? pc.scale * acc[a] : MASKED;
      }
    }
  }
  barrier();

  uint P = WG / pc.qblock;
  chunk_softmax(l, P, l / P < nq ? seen_of(l / P) : 0u);

  uint qv = max(clamp(WG / pc.D4, 1u, nq), (nq + QPT - 1u) / QPT);
  for (uint t = l; t < qv * pc.D4; t += WG) {
    uint d4 = t % pc.D4, g = t / pc.D4;
    vec4 acc[QPT];
    uint na[QPT];
    for (uint a = 0u; a < QPT; ++a) {
      acc[a] = vec4(0.0);
      na[a] = g + a * qv < nq ? seen_of(g + a * qv) : 0u;
    }
    uint nc = pc.pos > c0 ? min(nk, pc.pos - c0) : 0u;  // cached keys, then this step's
    for (uint c = 0u; c < nc; c += KB) {
      vec4 vv[KB];
      for (uint u = 0u; u < KB; ++u) vv[u] = c + u < nc ? TO_VEC4(v_cache[cached_at(c0 + c + u, d4)]) : vec4(0.0);
      for (uint a = 0u; a < QPT; ++a)
        for (uint u = 0u; u < KB; ++u)
          if (c + u < min(na[a], nc)) acc[a] += sc[(g + a * qv) * pc.chunk + c + u] * vv[u];
    }
    for (uint c = nc; c < nk; ++c) {
      vec4 vt = v_at4(fresh_at(c0 + c, d4));
      for (uint a = 0u; a < QPT; ++a)
        if (c < na[a]) acc[a] += sc[(g + a * qv) * pc.chunk + c] * vt;
    }
    for (uint a = 0u; a < QPT; ++a) {
      uint i = g + a * qv;
      if (i < nq) part_o[(row_of(i) * pc.chunks + j) * pc.D4 + d4] = acc[a];
    }
  }
  if (l < nq) part_ml[row_of(l) * pc.chunks + j] = vec2(stat_m[l], stat_l[l]);
}
