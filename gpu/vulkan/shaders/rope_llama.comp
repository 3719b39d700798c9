// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per output texel, xq_out's tq texels first, then xk_out's, in float32 whatever the
// storage, the texel stored once. Tensors in any layout (gpu/ACCESSORS.md).
// Bandwidth: when the texel's 4 lanes are 4 consecutive elements (every buffer texel; a width-packed
// one with W % 4 == 0; lane 3 = lane 0 + 3 implies it in every layout, the lane strides being
// uniform), they are two whole pairs (lane 0 is even: W = D is even): one 4-wide load of x and two
// table entries per pair, with the row arithmetic done once per texel instead of once per lane.
// When D % 4 == 2 the second pair may start the next row (its table row is then that row's, i = 0).
// Other texels (padding, strided lanes) take the per-lane path. Both compute each element with the
// same float32 expression, so the results are bit-identical.
TS_INPUT(xq, 0)
TS_INPUT(xk, 1)
TS_INPUT(freqs_cos, 2)
TS_INPUT(freqs_sin, 3)
TS_OUTPUT(xq_out, 4)
TS_OUTPUT(xk_out, 5)
layout(push_constant) uniform Params { uint n; uint tq; uint S; uint Hq; uint Hkv; uint hd; } pc;

vec2 rotate(float a, float b, float c, float n) { return vec2(a * c - b * n, a * n + b * c); }

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  bool is_q = id < pc.tq;
  uint t = is_q ? id : id - pc.tq;
  uint D = 2u * pc.hd, H = is_q ? pc.Hq : pc.Hkv;
  uint f0 = is_q ? xq_out_flat(t, 0u) : xk_out_flat(t, 0u);
  uint f3 = is_q ? xq_out_flat(t, 3u) : xk_out_flat(t, 3u);
  vec4 v = vec4(0.0);
  if (f3 == f0 + 3u && (f0 & 1u) == 0u) {
    vec4 x = is_q ? xq_at4(f0) : xk_at4(f0);
    uint row = f0 / D, d = f0 - row * D;
    uint a = ((row / H) % pc.S) * pc.hd + d / 2u;                          // table entry of pair 0
    uint b = d + 2u < D ? a + 1u : (((row + 1u) / H) % pc.S) * pc.hd;     // of pair 1
    v.xy = rotate(x.x, x.y, freqs_cos_at(a), freqs_sin_at(a));
    v.zw = rotate(x.z, x.w, freqs_cos_at(b), freqs_sin_at(b));
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      uint f = is_q ? xq_out_flat(t, j) : xk_out_flat(t, j);
      if (f == TS_PADDING) continue;
      uint e = f & ~1u;  // the pair's even element (D is even: pairs never straddle rows)
      uint i = (f % D) / 2u, s = (f / D / H) % pc.S;
      float a = is_q ? xq_at(e) : xk_at(e), b = is_q ? xq_at(e + 1u) : xk_at(e + 1u);
      vec2 r = rotate(a, b, freqs_cos_at(s * pc.hd + i), freqs_sin_at(s * pc.hd + i));
      v[j] = (f & 1u) == 0u ? r.x : r.y;
    }
  }
  if (is_q) xq_out_store(t, v);
  else xk_out_store(t, v);
}
