// The chunk softmax of sdpa's split partials (sdpa_split_partial.wgsl, sdpa_decode_partial.wgsl),
// included (gpu/kernel_source.h) by kernels that declare MASKED, workgroup arrays `red` (WG),
// `stat_m` and `stat_l`, and their layout of scores in workgroup memory:
// `fn score(i: u32, c: u32) -> f32` and `fn set_weight(i: u32, c: u32, e: f32)` for query i of the
// block and key c of the chunk. For the query qi = l / P of invocation l, over its first n keys:
//   m = max_c s_c (MASKED if n = 0),  e_c = exp(s_c - m) in place of s_c,  l = sum_c e_c,
// into stat_m[qi] and stat_l[qi]: P invocations a query over strided parts of the keys, the
// includer's `fn run_max(x: f32) -> f32` / `run_sum` combining each aligned run of RUN of them,
// part 0 adding the runs in order (as the GLSL twin, which see). Scores of keys c >= n stay as they
// are. It has barriers (and the runs may shuffle): call it from uniform control flow, after the
// scores' barrier.
fn chunk_softmax(l: u32, P: u32, n: u32) {
  let qi = l / P;
  let part = l % P;
  var m = MASKED;
  for (var c = part; c < n; c += P) { m = max(m, score(qi, c)); }
  m = run_max(m);
  red[l] = m;
  workgroupBarrier();
  if (part == 0u) {
    for (var k = RUN; k < P; k += RUN) { m = max(m, red[l + k]); }
    stat_m[qi] = m;
  }
  workgroupBarrier();
  m = stat_m[qi];
  var sum = 0.0;
  for (var c = part; c < n; c += P) {
    let e = exp(score(qi, c) - m);
    set_weight(qi, c, e);
    sum += e;
  }
  sum = run_sum(sum);
  red[l] = sum;  // the maxima were read before the last barrier
  workgroupBarrier();
  if (part == 0u) {
    for (var k = RUN; k < P; k += RUN) { sum += red[l + k]; }
    stat_l[qi] = sum;
  }
  workgroupBarrier();
}
