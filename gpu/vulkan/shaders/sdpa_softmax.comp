// sdpa softmax, in place over each score row r = (h, s) of ctx scores: query s sees keys c < n =
// pos + s + 1 (causal), and
//   scores[r,c] = exp(scores[r,c] - m) / sum_{c' < n} exp(scores[r,c'] - m),   m = max_{c < n} scores[r,c],
//   scores[r,c] = 0                                                           for n <= c < ctx,
// the masked scores never read (a masked weight is exactly 0, as exp(MASKED - m) was).
// Subtracting the row max keeps every exp() in (0, 1] whatever the logits' size (an unstable
// softmax overflows float32 once a score passes ~88.7).
// A workgroup of WG = 256 takes WG / T rows, T = tpr invocations a row (a power of two the plan
// sizes to ctx): invocation t of a row takes keys t, t + T, ...; the max and the sum are reduced
// in shared memory (a tree: no subgroup size assumed), float32; each invocation sums its own
// weights in key order and normalises the weights it computed. A row of at most KR * T keys is
// read once into registers (its KR loads in flight together) and written once; a longer one is
// read for the max, read and written for the weights, then read and written to normalise.
layout(std430, binding = 0) buffer SC { float scores[]; };
layout(push_constant) uniform Params { uint n; uint S; uint pos; uint ctx; uint tpr; } pc;

const uint WG = 256u;  // = Dispatch::workgroup (gpu/plans/sdpa.cpp kTiledWg)
const uint KR = 8u;    // keys an invocation holds in registers (kSoftmaxKeys)
const float MASKED = -1.0e30;

shared float red[WG];

// The row's max (sum) over its T invocations l - t .. l - t + T - 1, returned to each of them.
float reduce_max(uint l, uint t, float m) {
  red[l] = m;
  barrier();
  for (uint k = pc.tpr / 2u; k > 0u; k /= 2u) {
    if (t < k) red[l] = max(red[l], red[l + k]);
    barrier();
  }
  m = red[l - t];
  barrier();
  return m;
}
float reduce_sum(uint l, uint t, float sum) {
  red[l] = sum;
  barrier();
  for (uint k = pc.tpr / 2u; k > 0u; k /= 2u) {
    if (t < k) red[l] += red[l + k];
    barrier();
  }
  sum = red[l - t];
  return sum;  // no barrier: the kernel's last use of red
}
// The weight exp(x - m) of key c, added to the invocation's sum; 0 past the causal limit.
float weight(uint c, uint seen, float x, float m, inout float sum) {
  if (c >= seen) return 0.0;
  float e = exp(x - m);
  sum += e;
  return e;
}
float load(uint b, uint c, uint seen) { return c < seen ? scores[b + c] : MASKED; }
void put(uint b, uint c, uint ctx, float p) {
  if (c < ctx) scores[b + c] = p;
}

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = ts_local_index(), T = pc.tpr, t = l % T, r = w * (WG / T) + l / T;
  if (w * (WG / T) >= pc.n) return;  // a folded grid's spare workgroups, whole
  uint b = r * pc.ctx, seen = r < pc.n ? pc.pos + r % pc.S + 1u : 0u, ctx = r < pc.n ? pc.ctx : 0u;
  float m = MASKED;
  float sum = 0.0;
  if (pc.ctx <= KR * T) {  // uniform in the workgroup
    float x0 = load(b, t, seen), x1 = load(b, t + T, seen), x2 = load(b, t + 2u * T, seen), x3 = load(b, t + 3u * T, seen);
    float x4 = load(b, t + 4u * T, seen), x5 = load(b, t + 5u * T, seen), x6 = load(b, t + 6u * T, seen), x7 = load(b, t + 7u * T, seen);
    m = reduce_max(l, t, max(max(max(x0, x1), max(x2, x3)), max(max(x4, x5), max(x6, x7))));
    x0 = weight(t, seen, x0, m, sum);
    x1 = weight(t + T, seen, x1, m, sum);
    x2 = weight(t + 2u * T, seen, x2, m, sum);
    x3 = weight(t + 3u * T, seen, x3, m, sum);
    x4 = weight(t + 4u * T, seen, x4, m, sum);
    x5 = weight(t + 5u * T, seen, x5, m, sum);
    x6 = weight(t + 6u * T, seen, x6, m, sum);
    x7 = weight(t + 7u * T, seen, x7, m, sum);
    float inv = 1.0 / reduce_sum(l, t, sum);  // >= 1: the max's own term is exp(0)
    put(b, t, ctx, x0 * inv);
    put(b, t + T, ctx, x1 * inv);
    put(b, t + 2u * T, ctx, x2 * inv);
    put(b, t + 3u * T, ctx, x3 * inv);
    put(b, t + 4u * T, ctx, x4 * inv);
    put(b, t + 5u * T, ctx, x5 * inv);
    put(b, t + 6u * T, ctx, x6 * inv);
    put(b, t + 7u * T, ctx, x7 * inv);
    return;
  }
  for (uint c = t; c < seen; c += T) m = max(m, scores[b + c]);
  m = reduce_max(l, t, m);
  for (uint c = t; c < seen; c += T) scores[b + c] = weight(c, seen, scores[b + c], m, sum);
  float inv = 1.0 / reduce_sum(l, t, sum);  // >= 1: the max's own term is exp(0)
  for (uint c = t; c < seen; c += T) scores[b + c] *= inv;
  for (uint c = seen + t; c < ctx; c += T) scores[b + c] = 0.0;
}
