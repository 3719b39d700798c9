// sdpa split (flash-decoding), step 1 of 2, for short query blocks (decode: the G heads of one kv
// head at S = 1): the function of sdpa_split_partial.comp, which see, per query row of the block and
// chunk j of the context (keys c in [c0, c0 + chunk)):
//   m = max_c s_c (MASKED if it sees none),  e_c = exp(s_c - m),  l = sum_c e_c,
//   part_o[row, j, :] = sum_c e_c v[c, kvh, :],  part_ml[row, j] = (m, l),  s_c = scale * q . k_c,
// float32 (float16 / bfloat16 only in storage); keys past a query's causal limit weigh 0 exactly;
// keys c >= pos (this step's rows) come from k and v, earlier ones from the caches.
// Workgroup (query block b of QB rows, chunk j, kv head kvh), b fastest; the plan picks this kernel
// where a kv head has at most 16 query rows, S <= FMAX and D <= 4 * LG * TL (gpu/plans/sdpa.cpp).
// Written for bandwidth: decode reads every cached K and V byte once and does little else.
// 1. Scores: a lane group (LG = 8 consecutive invocations of one subgroup) takes KP keys at once;
//    invocation t of the group holds head-dim texels t, t + LG, ... of the block's QB queries in
//    registers (read once) and loads the same texels of the keys (the group reads a key row's
//    consecutive texels together: coalesced), so every K load feeds every query with no shared
//    memory on the way. Its KP * QB = LG partial dot products are then reduced across the group by
//    three subgroupShuffleXor steps that also scatter them: each step halves what an invocation
//    holds, and afterwards invocation t holds the whole dot product of key t / QB with query t % QB
//    (a tree over the LG partial sums; each partial adds its texels' vec4 dots in order).
// 2. Max and sum per query: WG / QB invocations per query (sdpa_chunk_softmax.glsl), each lane
//    group's 8 combined by shuffles first; the weights of keys past a query's limit are never read.
// 3. Weighted V: invocation (texel d4 = l % 32, slice l / 32) adds keys slice, slice + NS, ... in
//    key order, KB keys' texels loaded at once; a warp reads whole V rows (coalesced); the weights of
//    a key for all QB queries are one vec4 of shared memory. The NS slices are added in slice order.
//    (Reading V in 16-byte words too, 16 invocations a row and 8 slices added as a tree, was no
//    faster and spilled registers.)
// The shuffles need subgroups of at least LG invocations made of aligned runs of consecutive local
// indices (Dispatch::subgroup; every device seen: lavapipe 8, NVIDIA 32).
// Barriers and shuffles are in uniform control flow: every loop bound around them is workgroup-uniform.
TS_INPUT(q, 0)
TS_INPUT(k, 1)
TS_INPUT(v, 2)
// K is read in words of two neighbouring texels (KWORD).
#if DTYPE_BYTES == 2
// 16-bit K cache read as 16-byte words, two texels each: a load instruction moves twice the bytes,
// and this kernel's time goes with its load instructions more than with its bytes.
layout(std430, binding = 3) readonly buffer KC { uvec4 k_cache[]; };
layout(std430, binding = 4) readonly buffer VC { DTYPE4 v_cache[]; };
vec4 widen(uint a, uint b) {
#if IS_F16
  return vec4(unpackHalf2x16(a), unpackHalf2x16(b));
#else
  return uintBitsToFloat(uvec4(a << 16, a & 0xFFFF0000u, b << 16, b & 0xFFFF0000u));
#endif
}
#define KWORD uvec4
KWORD k_word(uint i) { return k_cache[i / 2u]; }  // i: the word's first (even) texel
vec4 k_lo(KWORD w) { return widen(w.x, w.y); }
vec4 k_hi(KWORD w) { return widen(w.z, w.w); }
#else
layout(std430, binding = 3) readonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 4) readonly buffer VC { DTYPE4 v_cache[]; };
#define KWORD mat2x4
KWORD k_word(uint i) { return KWORD(TO_VEC4(k_cache[i]), TO_VEC4(k_cache[i + 1u])); }
vec4 k_lo(KWORD w) { return w[0]; }
vec4 k_hi(KWORD w) { return w[1]; }
#endif
layout(std430, binding = 5) writeonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 6) writeonly buffer PML { vec2 part_ml[]; };
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; float scale; uint chunk; uint chunks; uint qblocks;
} pc;

const uint WG = 128u;  // = Dispatch::workgroup (gpu/plans/sdpa.cpp kDecodeWg)
const uint QB = 4u;    // query rows a workgroup (kDecodeQueries)
const uint LG = 8u;    // invocations a key in the scores (= Dispatch::subgroup)
const uint TL = 4u;    // head-dim texels an invocation holds: D4 <= LG * TL (kDecodeMaxD4); D4 even
const uint KP = 2u;    // keys a lane group scores at once: KP * QB = LG
const uint NS = WG / 32u;  // weighted-V slices of the keys
const uint KB = 8u;     // V texels an invocation loads before their first use
const float MASKED = -1.0e30;

// Shared memory is kept small: on NVIDIA what a workgroup takes of it comes out of the L1 that holds
// loads in flight (PERFORMANCE.md, "numbers that stood in code comments").
// [key]: the QB queries' scores, then weights; after the last weight is read, slices 1.. of the
// weighted V, [slice][query][texel] ((NS - 1) * QB * 32 = 384 <= DCHUNK).
shared vec4 w4[DCHUNK];
shared vec4 kf[FMAX * 32u], qf[QB * 32u];  // this step's key rows (S <= FMAX) and the queries, staged
shared float red[WG];
shared float stat_m[QB], stat_l[QB];

uint G, q0, nq, c0, kvh;

uint row_of(uint i) {
  uint qi = q0 + min(i, nq - 1u);
  return (qi / G) * pc.Hq + kvh * G + qi % G;
}
// How many keys of this chunk query i sees (0 for the block's spare rows i >= nq).
uint seen_of(uint i) {
  uint n = pc.pos + (q0 + min(i, nq - 1u)) / G + 1u;
  return i < nq && n > c0 ? min(pc.chunk, n - c0) : 0u;
}
// Texel u of those invocation t of a lane group holds: pairs of neighbours (one 16-byte word of a
// 16-bit cache), pair t then pair t + LG.
uint texel_of(uint t, uint u) { return 2u * (t + LG * (u / 2u)) + u % 2u; }
uint fresh_at(uint c, uint d4) { return 4u * (((c - pc.pos) * pc.Hkv + kvh) * pc.D4 + d4); }
uint cached_at(uint c, uint d4) { return (c * pc.Hkv + kvh) * pc.D4 + d4; }
float score(uint i, uint c) { return w4[c][i]; }
void set_weight(uint i, uint c, float e) { w4[c][i] = e; }
// chunk_softmax's runs: the LG parts of a lane group combine by shuffles (a tree: partners t ^ 1,
// then t ^ 2, then t ^ 4), and part 0 adds P / LG = 4 runs, not 32 parts, from shared memory.
const uint RUN = LG;
float run_max(float x) {
  for (uint b = 1u; b < LG; b *= 2u) x = max(x, subgroupShuffleXor(x, b));
  return x;
}
float run_sum(float x) {
  for (uint b = 1u; b < LG; b *= 2u) x += subgroupShuffleXor(x, b);
  return x;
}
#include "sdpa_chunk_softmax.glsl"

// Two halves of a value list held by partners (lane bit `bit` clear / set): each keeps its half and
// adds the partner's copy of it.
float keep(bool hi, float lo_v, float hi_v, uint bit) {
  return (hi ? hi_v : lo_v) + subgroupShuffleXor(hi ? lo_v : hi_v, bit);
}

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = ts_local_index();
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint b = w % pc.qblocks, rest = w / pc.qblocks, j = rest % pc.chunks;
  kvh = rest / pc.chunks;
  G = pc.Hq / pc.Hkv;
  q0 = b * QB;
  nq = min(QB, pc.S * G - q0);
  c0 = j * pc.chunk;
  uint nk = seen_of(nq - 1u);  // the last query sees furthest
  uint nc = pc.pos > c0 ? min(nk, pc.pos - c0) : 0u;  // cached keys, then this step's

  uint t = l % LG, grp = l / LG;
  // The block's queries, staged once (all invocations, coalesced), then each invocation's texels.
  for (uint x = l; x < QB * pc.D4; x += WG) qf[x] = x / pc.D4 < nq ? q_at4(4u * (row_of(x / pc.D4) * pc.D4 + x % pc.D4)) : vec4(0.0);
  barrier();
  vec4 qr[QB][TL];
  for (uint i = 0u; i < QB; ++i)
    for (uint u = 0u; u < TL; ++u) qr[i][u] = texel_of(t, u) < pc.D4 ? qf[i * pc.D4 + texel_of(t, u)] : vec4(0.0);
  // Each step's K words are loaded one step ahead: the next step's loads are in flight during this
  // step's dots and shuffles (faster, though it costs registers).
  KWORD ahead[KP][TL / 2u];
  for (uint p = 0u; p < KP; ++p)
    for (uint u = 0u; u < TL; u += 2u) {
      uint c = grp * KP + p, d4 = texel_of(t, u);
      ahead[p][u / 2u] = c < nc && d4 < pc.D4 ? k_word(cached_at(c0 + c, d4)) : KWORD(0);
    }
  for (uint base = 0u; base < nc; base += (WG / LG) * KP) {
    vec4 kk[KP][TL];
    for (uint p = 0u; p < KP; ++p)
      for (uint u = 0u; u < TL; u += 2u) {
        kk[p][u] = k_lo(ahead[p][u / 2u]);
        kk[p][u + 1u] = k_hi(ahead[p][u / 2u]);
        uint c = base + (WG / LG) * KP + grp * KP + p, d4 = texel_of(t, u);
        ahead[p][u / 2u] = c < nc && d4 < pc.D4 ? k_word(cached_at(c0 + c, d4)) : KWORD(0);
      }
    float acc[KP * QB];
    for (uint p = 0u; p < KP; ++p)
      for (uint i = 0u; i < QB; ++i) {
        float a = 0.0;
        for (uint u = 0u; u < TL; ++u) a += dot(qr[i][u], kk[p][u]);
        acc[p * QB + i] = a;
      }
    float h4[4], h2[2];
    for (uint x = 0u; x < 4u; ++x) h4[x] = keep((t & 4u) != 0u, acc[x], acc[x + 4u], 4u);
    for (uint x = 0u; x < 2u; ++x) h2[x] = keep((t & 2u) != 0u, h4[x], h4[x + 2u], 2u);
    float s = keep((t & 1u) != 0u, h2[0], h2[1], 1u);
    uint c = base + grp * KP + t / QB, i = t % QB;
    if (c < nc) w4[c][i] = c < seen_of(i) ? pc.scale * s : MASKED;
  }
  // This step's keys (at most FMAX, at the end of the last chunk): their rows staged in shared memory
  // by all invocations at once (a dot product reading them from global memory texel by
  // texel would keep its workgroup, and so the dispatch, waiting on one load after another), then an
  // invocation a score, its dot products in head-dim order. One accessor site each: a CPU device
  // compiles this kernel at its first dispatch, in time that grows with the unrolled loads.
  uint nf = nk - nc;
  if (nf > 0u) {
    for (uint x = l; x < nf * pc.D4; x += WG) kf[x] = k_at4(fresh_at(c0 + nc + x / pc.D4, x % pc.D4));
    barrier();
    for (uint x = l; x < nf * QB; x += WG) {
      uint c = nc + x / QB, i = x % QB;
      float a = 0.0;
      for (uint d4 = 0u; d4 < pc.D4; ++d4) a += dot(qf[i * pc.D4 + d4], kf[(x / QB) * pc.D4 + d4]);
      w4[c][i] = c < seen_of(i) ? pc.scale * a : MASKED;
    }
  }
  barrier();

  chunk_softmax(l, WG / QB, seen_of(l / (WG / QB)));

  uint d4 = l % 32u, slice = l / 32u;
  vec4 acc[QB];
  uint na[QB];
  for (uint i = 0u; i < QB; ++i) {
    acc[i] = vec4(0.0);
    na[i] = seen_of(i);
  }
  // Whole batches of cached keys check no bound: every query of the block sees every cached key (its
  // limit pos + s is past them), and the spare rows' sums are never stored. The checks were most
  // of the weighted V's instructions.
  uint whole = nc - nc % (NS * KB);
  for (uint base = 0u; base < whole; base += NS * KB) {
    vec4 vv[KB];
    for (uint u = 0u; u < KB; ++u) vv[u] = d4 < pc.D4 ? TO_VEC4(v_cache[cached_at(c0 + base + u * NS + slice, d4)]) : vec4(0.0);
    for (uint u = 0u; u < KB; ++u) {
      vec4 e = w4[base + u * NS + slice];
      for (uint i = 0u; i < QB; ++i) acc[i] += e[i] * vv[u];
    }
  }
  for (uint base = whole; base < nc; base += NS * KB) {
    vec4 vv[KB];
    for (uint u = 0u; u < KB; ++u) {
      uint c = base + u * NS + slice;
      vv[u] = c < nc && d4 < pc.D4 ? TO_VEC4(v_cache[cached_at(c0 + c, d4)]) : vec4(0.0);
    }
    for (uint u = 0u; u < KB; ++u) {
      uint c = base + u * NS + slice;
      if (c < nc) {
        vec4 e = w4[c];
        for (uint i = 0u; i < QB; ++i)
          if (c < na[i]) acc[i] += e[i] * vv[u];
      }
    }
  }
  // This step's values, after the cached ones: each slice still adds its keys in key order.
  for (uint c = nc + (slice + NS - nc % NS) % NS; c < nk; c += NS) {
    vec4 vt = d4 < pc.D4 ? v_at4(fresh_at(c0 + c, d4)) : vec4(0.0);
    vec4 e = w4[c];
    for (uint i = 0u; i < QB; ++i)
      if (c < na[i]) acc[i] += e[i] * vt;
  }
  barrier();  // every weight was read: w4 holds the slices' sums now
  if (slice > 0u)
    for (uint i = 0u; i < QB; ++i) w4[((slice - 1u) * QB + i) * 32u + d4] = acc[i];
  barrier();
  if (slice == 0u && d4 < pc.D4)
    for (uint i = 0u; i < QB; ++i)
      if (i < nq) {
        vec4 o = acc[i];
        for (uint x = 0u; x + 1u < NS; ++x) o += w4[(x * QB + i) * 32u + d4];
        part_o[(row_of(i) * pc.chunks + j) * pc.D4 + d4] = o;
      }
  if (l < nq) part_ml[row_of(l) * pc.chunks + j] = vec2(stat_m[l], stat_l[l]);
}
