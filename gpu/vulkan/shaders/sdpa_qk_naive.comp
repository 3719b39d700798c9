// sdpa QK (naive): for c < ctx, with kvh = h / (Hq / Hkv),
//   scores[h,s,c] = scale * dot(q[s,h,:], k_cache[c,kvh,:])   if c <= pos + s,
//   scores[h,s,c] = MASKED                                    if c >  pos + s (causal).
// One invocation per score; float32 accumulation in d order. q in any layout (gpu/ACCESSORS.md).
TS_INPUT(q, 0)
layout(std430, binding = 1) readonly buffer KC { DTYPE k_cache[]; };
layout(std430, binding = 2) writeonly buffer SC { float scores[]; };
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; float scale; } pc;

// exp(MASKED - row max) is exactly 0 in the softmax; finite, like the WGSL kernels' (WGSL has no -inf).
const float MASKED = -1.0e30;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uint c = i % pc.ctx, row = i / pc.ctx, s = row % pc.S, h = row / pc.S;
  if (c > pc.pos + s) {
    scores[i] = MASKED;
    return;
  }
  uint D = pc.D4 * 4, kvh = h / (pc.Hq / pc.Hkv);
  uint qb = (s * pc.Hq + h) * D, kb = (c * pc.Hkv + kvh) * D;
  float acc = 0.0;
  for (uint d = 0; d < D; ++d) acc += q_at(qb + d) * TO_FLOAT(k_cache[kb + d]);
  scores[i] = pc.scale * acc;
}
