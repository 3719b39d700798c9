// sdpa softmax, in place over each score row r = (h, s) of ctx scores: query s sees keys c < n =
// pos + s + 1 (causal), and
//   scores[r,c] = exp(scores[r,c] - m) / sum_{c' < n} exp(scores[r,c'] - m),   m = max_{c < n} scores[r,c],
//   scores[r,c] = 0                                                           for n <= c < ctx,
// the masked scores never read (a masked weight is exactly 0, as exp(MASKED - m) was).
// Subtracting the row max keeps every exp() in (0, 1] whatever the logits' size (an unstable
// softmax overflows float32 once a score passes ~88.7).
// A workgroup of WG = 256 takes WG / T rows, T = tpr invocations a row (a power of two the plan
// sizes to ctx): invocation t of a row takes keys t, t + T, ...; the max and the sum are reduced
// in shared memory (a tree: no subgroup size assumed), float32. Each invocation normalises the
// weights it wrote itself.
layout(std430, binding = 0) buffer SC { float scores[]; };
layout(push_constant) uniform Params { uint n; uint S; uint pos; uint ctx; uint tpr; } pc;

const uint WG = 256u;  // = Dispatch::workgroup (reference/sdpa.cpp kTiledWg)
const float MASKED = -1.0e30;

shared float red[WG];

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = gl_LocalInvocationIndex, T = pc.tpr, t = l % T, r = w * (WG / T) + l / T;
  if (w * (WG / T) >= pc.n) return;  // a folded grid's spare workgroups, whole
  uint b = r * pc.ctx, seen = r < pc.n ? pc.pos + r % pc.S + 1u : 0u, ctx = r < pc.n ? pc.ctx : 0u;
  float m = MASKED;
  for (uint c = t; c < seen; c += T) m = max(m, scores[b + c]);
  red[l] = m;
  barrier();
  for (uint k = T / 2u; k > 0u; k /= 2u) {
    if (t < k) red[l] = max(red[l], red[l + k]);
    barrier();
  }
  m = red[l - t];
  barrier();
  float sum = 0.0;
  for (uint c = t; c < seen; c += T) {
    float e = exp(scores[b + c] - m);
    scores[b + c] = e;
    sum += e;
  }
  red[l] = sum;
  barrier();
  for (uint k = T / 2u; k > 0u; k /= 2u) {
    if (t < k) red[l] += red[l + k];
    barrier();
  }
  float inv = 1.0 / red[l - t];  // >= 1: the max's own term is exp(0)
  for (uint c = t; c < seen; c += T) scores[b + c] *= inv;
  for (uint c = seen + t; c < ctx; c += T) scores[b + c] = 0.0;
}
