// sdpa AV (naive): out[s,h,d] = sum_{c < ctx} p[h,s,c] * v_cache[c,kvh,d],  kvh = h / (Hq / Hkv),
// p the softmaxed scores (0 where masked). One invocation per output texel, each lane one output
// element; float32 accumulation in c order. out in any of its layouts (gpu/ACCESSORS.md).
layout(std430, binding = 0) readonly buffer SC { float scores[]; };
layout(std430, binding = 1) readonly buffer VC { DTYPE v_cache[]; };
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint ctx; } pc;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  uint D = pc.D4 * 4u;
  vec4 o = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    uint i = out_flat(t, j);
    if (i == TS_PADDING) continue;
    uint d = i % D, sh = i / D, h = sh % pc.Hq, s = sh / pc.Hq;
    uint kvh = h / (pc.Hq / pc.Hkv), pb = (h * pc.S + s) * pc.ctx, vstride = pc.Hkv * D;
    float acc = 0.0;
    for (uint c = 0u; c < pc.ctx; ++c) acc += scores[pb + c] * TO_FLOAT(v_cache[c * vstride + kvh * D + d]);
    o[j] = acc;
  }
  out_store(t, o);
}
