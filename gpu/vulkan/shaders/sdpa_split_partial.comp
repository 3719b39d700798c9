// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context. Workgroup (query block b, chunk j, kv head kvh), b fastest so that the
// blocks reading one chunk run together (prefill: the chunk's K/V is then read from L2 once): its
// queries are rows qi = qblock*b + i, i < qblock (and < S * G, G = Hq / Hkv) of this kv head,
// qi = s*G + g: head h = kvh*G + g at position s. All of them share every K and V load of the
// chunk (GQA decode: the G heads; prefill: also consecutive positions, 32 queries a block). Keys c
// in [c0, c0 + chunk), c0 = j * chunk; query (h, s) sees c <= pos + s and skips the rest (weight 0
// exactly, never an exp). Per query:
//   m = max_c s_c (MASKED if it sees none),  e_c = exp(s_c - m),  l = sum_c e_c,
//   part_o[row, j, :] = sum_c e_c v_cache[c, kvh, :],  part_ml[row, j] = (m, l),  row = s*Hq + h,
// everything float32 (float16 / bfloat16 only in storage). A chunk past a query's limit still
// writes (MASKED, 0) and zeros, so the scratch is fully written (sdpa_split_combine never reads it).
// 1. Scores: invocation l takes (query, key) pairs l, l + 64, ... (key fastest): a dot product of
//    4-wide texels over the head dim; the queries of one key re-read its row from cache. The
//    chunk's scores go to shared memory. Pairs rather than keys keep every invocation busy when the
//    chunk is shorter than the workgroup (decode: chunks of 32 keys, to have many workgroups).
// 2. Max and sum per query: P = 64 / qblock invocations per query over strided parts of the chunk
//    (part k: keys k, k + P, ...), then one adds the P in order (shared memory: no subgroup size
//    assumed; lavapipe has 8, NVIDIA 32).
// 3. Weighted V: invocation l takes (query, head-dim texel) pairs l, l + 64, ...: consecutive
//    invocations read consecutive texels of one V row (coalesced); the queries re-read it from cache.
// Barriers are in uniform control flow: every loop bound around a barrier is workgroup-uniform.
TS_INPUT(q, 0)
TS_INPUT(k_cache, 1)
TS_INPUT(v_cache, 2)
layout(std430, binding = 3) writeonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 4) writeonly buffer PML { vec2 part_ml[]; };
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; float scale; uint chunk; uint chunks; uint qblocks; uint qblock;
} pc;

const uint WG = 64u;       // = Dispatch::workgroup (reference/sdpa.cpp kSplitWg)
const uint QMAX = 32u;     // the longest query block; qblock is a power of two <= 32
const uint SCMAX = 4096u;  // qblock * chunk <= SCMAX (kSplitScores)
const float MASKED = -1.0e30;

shared float sc[SCMAX];  // [query][key], row stride chunk: scores, then weights
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

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = gl_LocalInvocationIndex;
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  uint b = w % pc.qblocks, rest = w / pc.qblocks, j = rest % pc.chunks;
  kvh = rest / pc.chunks;
  G = pc.Hq / pc.Hkv;
  q0 = b * pc.qblock;
  nq = min(pc.qblock, pc.S * G - q0);
  c0 = j * pc.chunk;
  uint nk = seen_of(nq - 1u);  // the last query sees furthest

  for (uint t = l; t < nq * nk; t += WG) {
    uint i = t / nk, c = t % nk, kb = ((c0 + c) * pc.Hkv + kvh) * pc.D4, qb = row_of(i) * pc.D4;
    float acc = 0.0;
    for (uint d4 = 0u; d4 < pc.D4; ++d4) acc += dot(q_at4(4u * (qb + d4)), k_cache_at4(4u * (kb + d4)));
    sc[i * pc.chunk + c] = c < seen_of(i) ? pc.scale * acc : MASKED;
  }
  barrier();

  uint P = WG / pc.qblock, qi = l / P, part = l % P, n = qi < nq ? seen_of(qi) : 0u;
  float m = MASKED;
  for (uint c = part; c < n; c += P) m = max(m, sc[qi * pc.chunk + c]);
  red[l] = m;
  barrier();
  if (part == 0u) {
    for (uint k = 1u; k < P; ++k) m = max(m, red[l + k]);
    stat_m[qi] = m;
  }
  barrier();
  m = stat_m[qi];
  float sum = 0.0;
  for (uint c = part; c < n; c += P) {
    float e = exp(sc[qi * pc.chunk + c] - m);
    sc[qi * pc.chunk + c] = e;
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  barrier();
  if (part == 0u) {
    for (uint k = 1u; k < P; ++k) sum += red[l + k];
    stat_l[qi] = sum;
  }
  barrier();

  for (uint t = l; t < nq * pc.D4; t += WG) {
    uint i = t / pc.D4, d4 = t % pc.D4, n_i = seen_of(i);
    vec4 acc = vec4(0.0);
    for (uint c = 0u; c < n_i; ++c) acc += sc[i * pc.chunk + c] * v_cache_at4(4u * (((c0 + c) * pc.Hkv + kvh) * pc.D4 + d4));
    part_o[(row_of(i) * pc.chunks + j) * pc.D4 + d4] = acc;
  }
  if (l < nq) part_ml[row_of(l) * pc.chunks + j] = vec2(stat_m[l], stat_l[l]);
}
