// The chunk softmax of sdpa's split partials (sdpa_split_partial.comp, sdpa_decode_partial.comp),
// included (gpu/kernel_source.h) after the includer's MASKED, shared `float red[WG]`, `stat_m[]`,
// `stat_l[]` and its layout of scores in shared memory: `float score(uint i, uint c)` and
// `void set_weight(uint i, uint c, float e)` for query i of the block and key c of the chunk.
// For the query qi = l / P of invocation l, over its first n keys:
//   m = max_c s_c (MASKED if n = 0),  e_c = exp(s_c - m) in place of s_c,  l = sum_c e_c,
// into stat_m[qi] and stat_l[qi]. P invocations a query take strided parts of the keys (part k:
// keys k, k + P, ...). The includer's `float run_max(float)` and `float run_sum(float)` combine
// the parts of each aligned run of RUN consecutive invocations (P % RUN == 0) into the run's first:
// subgroup shuffles where the kernel has subgroups, RUN = 1 and the identity where it has none.
// Part 0 then adds the runs in order through shared memory. Scores of keys c >= n stay as they
// are: the weighted V never reads them. It has barriers (and the runs may shuffle): call it from
// uniform control flow, after the scores' barrier.
void chunk_softmax(uint l, uint P, uint n) {
  uint qi = l / P, part = l % P;
  float m = MASKED;
  for (uint c = part; c < n; c += P) m = max(m, score(qi, c));
  m = run_max(m);
  red[l] = m;
  barrier();
  if (part == 0u) {
    for (uint k = RUN; k < P; k += RUN) m = max(m, red[l + k]);
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
  sum = run_sum(sum);
  red[l] = sum;  // the maxima were read before the last barrier
  barrier();
  if (part == 0u) {
    for (uint k = RUN; k < P; k += RUN) sum += red[l + k];
    stat_l[qi] = sum;
  }
  barrier();
}
