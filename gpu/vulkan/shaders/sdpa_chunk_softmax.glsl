// The chunk softmax of sdpa's split partials (sdpa_split_partial.comp, sdpa_decode_partial.comp),
// included (gpu/kernel_source.h) after the includer's MASKED, shared `float red[WG]`, `stat_m[]`,
// `stat_l[]` and its layout of scores in shared memory: `float score(uint i, uint c)` and
// `void set_weight(uint i, uint c, float e)` for query i of the block and key c of the chunk.
// For the query qi = l / P of invocation l, over its first n keys:
//   m = max_c s_c (MASKED if n = 0),  e_c = exp(s_c - m) in place of s_c,  l = sum_c e_c,
// into stat_m[qi] and stat_l[qi]. P invocations a query take strided parts of the keys (part k:
// keys k, k + P, ...), then part 0 adds the P in order (shared memory: no subgroup size assumed;
// lavapipe has 8, NVIDIA 32). Scores of keys c >= n stay as they are: the weighted V never reads
// them. It has barriers: call it from uniform control flow, after the scores' barrier.
void chunk_softmax(uint l, uint P, uint n) {
  uint qi = l / P, part = l % P;
  float m = MASKED;
  for (uint c = part; c < n; c += P) m = max(m, score(qi, c));
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
    float e = exp(score(qi, c) - m);
    set_weight(qi, c, e);
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  barrier();
  if (part == 0u) {
    for (uint k = 1u; k < P; ++k) sum += red[l + k];
    stat_l[qi] = sum;
  }
  barrier();
}
