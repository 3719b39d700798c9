// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per output texel, xq_out's tq texels first, then xk_out's; each lane computes its
// own element (reading its pair partner), in float32 whatever the storage, and the texel is stored
// once. Tensors in any layout (gpu/ACCESSORS.md): the same arithmetic, other addressing.
TS_INPUT(xq, 0)
TS_INPUT(xk, 1)
TS_INPUT(freqs_cos, 2)
TS_INPUT(freqs_sin, 3)
TS_OUTPUT(xq_out, 4)
TS_OUTPUT(xk_out, 5)
layout(push_constant) uniform Params { uint n; uint tq; uint S; uint Hq; uint Hkv; uint hd; } pc;

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  bool is_q = id < pc.tq;
  uint t = is_q ? id : id - pc.tq;
  uint D = 2u * pc.hd, H = is_q ? pc.Hq : pc.Hkv;
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    uint f = is_q ? xq_out_flat(t, j) : xk_out_flat(t, j);
    if (f == TS_PADDING) continue;
    uint e = f & ~1u;  // the pair's even element (D is even: pairs never straddle rows)
    uint i = (f % D) / 2u, s = (f / D / H) % pc.S;
    float c = freqs_cos_at(s * pc.hd + i);
    float n = freqs_sin_at(s * pc.hd + i);
    float a = is_q ? xq_at(e) : xk_at(e), b = is_q ? xq_at(e + 1u) : xk_at(e + 1u);
    v[j] = (f & 1u) == 0u ? a * c - b * n : a * n + b * c;
  }
  if (is_q) xq_out_store(t, v);
  else xk_out_store(t, v);
}
