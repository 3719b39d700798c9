// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context. Workgroup (query block b, chunk j, kv head kvh), b fastest so that the
// blocks reading one chunk run together (prefill: the chunk's K/V is then read from L2 once):
// its queries are rows qi = 8b .. 8b+7 (< S * G, G = Hq / Hkv) of this kv head, qi = s*G + g, head
// h = kvh*G + g at position s; all of them share every K and V load of the chunk (GQA decode: the
// G heads; prefill: also consecutive positions). Keys c in [c0, c0 + chunk), c0 = j * chunk; query
// (h, s) sees c <= pos + s and skips the rest (weight 0 exactly, never an exp). Per query:
//   m = max_c s_c (MASKED if it sees none),  e_c = exp(s_c - m),  l = sum_c e_c,
//   part_o[row, j, :] = sum_c e_c v_cache[c, kvh, :],  part_ml[row, j] = (m, l),  row = s*Hq + h,
// everything float32 (float16 / bfloat16 only in storage). A chunk past a query's limit still
// writes (MASKED, 0) and zeros, so the scratch is fully written (sdpa_split_combine never reads it).
// 1. Scores: invocation l takes (query, key) pairs l, l + 64, ... (key fastest): a dot product of
//    4-wide texels over the head dim; the queries of one key re-read its row from cache. The
//    chunk's scores go to shared memory. Pairs rather than keys keep every invocation busy when the
//    chunk is shorter than the workgroup (decode: chunks of 32 keys, to have many workgroups).
// 2. Max and sum per query: 8 invocations per query over a strided eighth of the chunk, then one
//    adds the 8 in order (shared memory: no subgroup size assumed; lavapipe has 8, NVIDIA 32).
// 3. Weighted V: invocation l takes (query, head-dim texel) pairs l, l + 64, ...: consecutive
//    invocations read consecutive texels of one V row (coalesced); the queries re-read it from cache.
// Barriers are in uniform control flow: every loop bound below a barrier is workgroup-uniform.
TS_INPUT(q, 0)
TS_INPUT(k_cache, 1)
TS_INPUT(v_cache, 2)
layout(std430, binding = 3) writeonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 4) writeonly buffer PML { vec2 part_ml[]; };
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; float scale; uint chunk; uint chunks; uint qblocks;
} pc;

const uint WG = 64u;     // = Dispatch::workgroup (reference/sdpa.cpp kSplitWg)
const uint QB = 8u;      // queries per workgroup (kSplitQueries); WG / QB invocations per query in step 2
const uint CHMAX = 256u; // longest chunk (kSplitMaxChunk)
const float MASKED = -1.0e30;

shared float sc[QB * CHMAX];  // [query][key]: scores, then weights
shared float red[WG];
shared float stat_m[QB], stat_l[QB];

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = gl_LocalInvocationIndex;
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint b = w % pc.qblocks, rest = w / pc.qblocks, j = rest % pc.chunks, kvh = rest / pc.chunks;
  uint G = pc.Hq / pc.Hkv, q0 = b * QB, nq = min(QB, pc.S * G - q0);
  uint c0 = j * pc.chunk;
  // Keys any query of the block sees: the last query has the furthest limit.
  uint limit = pc.pos + (q0 + nq - 1u) / G + 1u;
  uint nk = limit > c0 ? min(pc.chunk, limit - c0) : 0u;
  uint row[QB], seen[QB];  // out row, and keys of this chunk the query sees
  for (uint i = 0u; i < QB; ++i) {
    uint qi = q0 + min(i, nq - 1u), s = qi / G, n = pc.pos + s + 1u;
    row[i] = s * pc.Hq + kvh * G + qi % G;
    seen[i] = n > c0 ? min(pc.chunk, n - c0) : 0u;
  }

  for (uint t = l; t < nq * nk; t += WG) {
    uint i = t / nk, c = t % nk, kb = ((c0 + c) * pc.Hkv + kvh) * pc.D4, qb = row[i] * pc.D4;
    float acc = 0.0;
    for (uint d4 = 0u; d4 < pc.D4; ++d4) acc += dot(q_at4(4u * (qb + d4)), k_cache_at4(4u * (kb + d4)));
    sc[i * CHMAX + c] = c < seen[i] ? pc.scale * acc : MASKED;
  }
  barrier();

  uint qi = l / (WG / QB), part = l % (WG / QB), n = qi < nq ? seen[qi] : 0u;
  float m = MASKED;
  for (uint c = part; c < n; c += WG / QB) m = max(m, sc[qi * CHMAX + c]);
  red[l] = m;
  barrier();
  if (part == 0u) {
    for (uint k = 1u; k < WG / QB; ++k) m = max(m, red[l + k]);
    stat_m[qi] = m;
  }
  barrier();
  m = stat_m[qi];
  float sum = 0.0;
  for (uint c = part; c < n; c += WG / QB) {
    float e = exp(sc[qi * CHMAX + c] - m);
    sc[qi * CHMAX + c] = e;
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  barrier();
  if (part == 0u) {
    for (uint k = 1u; k < WG / QB; ++k) sum += red[l + k];
    stat_l[qi] = sum;
  }
  barrier();

  for (uint t = l; t < nq * pc.D4; t += WG) {
    uint i = t / pc.D4, d4 = t % pc.D4;
    vec4 acc = vec4(0.0);
    for (uint c = 0u; c < seen[i]; ++c) acc += sc[i * CHMAX + c] * v_cache_at4(4u * (((c0 + c) * pc.Hkv + kvh) * pc.D4 + d4));
    part_o[(row[i] * pc.chunks + j) * pc.D4 + d4] = acc;
  }
  if (l < nq) part_ml[row[l] * pc.chunks + j] = vec2(stat_m[l], stat_l[l]);
}
