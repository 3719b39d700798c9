// sdpa AV (naive): out[s,h,d] = sum_{c < ctx} p[h,s,c] * v_cache[c,kvh,d],  kvh = h / (Hq / Hkv),
// p the softmaxed scores (0 where masked). One invocation per output element; float32
// accumulation in c order.
layout(std430, binding = 0) readonly buffer SC { float scores[]; };
layout(std430, binding = 1) readonly buffer VC { DTYPE v_cache[]; };
layout(std430, binding = 2) writeonly buffer O { DTYPE out_[]; };
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint ctx; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uint D = pc.D4 * 4;
  uint d = i % D, sh = i / D, h = sh % pc.Hq, s = sh / pc.Hq;
  uint kvh = h / (pc.Hq / pc.Hkv), pb = (h * pc.S + s) * pc.ctx, vstride = pc.Hkv * D;
  float acc = 0.0;
  for (uint c = 0; c < pc.ctx; ++c) acc += scores[pb + c] * float(v_cache[c * vstride + kvh * D + d]);
  out_[i] = DTYPE(acc);
}
