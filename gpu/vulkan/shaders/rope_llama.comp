// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// Invocation id takes tpi output texels (the plan's: 2 when D % 8 == 0, else 1) from tpi*u of xq_out
// (u = id < nq) or of xk_out (u = id - nq), in float32 whatever the storage, each texel stored once.
// Tensors in any layout (gpu/ACCESSORS.md).
// Bandwidth: when the texels' lanes are 4*tpi consecutive elements of one row (every buffer texel
// when D % 8 == 0; lane strides are uniform within a texel, so these lane indices decide it in every
// layout), they are whole pairs (lane 0 is even: W = D is even) with consecutive table entries:
// 4-wide loads of x (and of both tables for two texels), and the row arithmetic (integer divisions,
// the costly part next to 16 bytes of float16) once per run. Other texels take the per-lane path
// (ragged D % 4 == 2 rows, strided packings). Both compute each element with the same float32
// expression, so the results are bit-identical. When every tensor is a buffer (known when compiling)
// and D % 8 == 0, the fast path below replaces all of this (faster: PERFORMANCE.md).
TS_INPUT(xq, 0)
TS_INPUT(xk, 1)
TS_INPUT(freqs_cos, 2)
TS_INPUT(freqs_sin, 3)
TS_OUTPUT(xq_out, 4)
TS_OUTPUT(xk_out, 5)
layout(push_constant) uniform Params { uint n; uint nq; uint tq; uint tk; uint tpi; uint S; uint Hq; uint Hkv; uint hd; } pc;

vec2 rotate(float a, float b, float c, float n) { return vec2(a * c - b * n, a * n + b * c); }

uint out_flat(bool is_q, uint t, uint j) { return is_q ? xq_out_flat(t, j) : xk_out_flat(t, j); }
float x_at(bool is_q, uint i) { return is_q ? xq_at(i) : xk_at(i); }
vec4 x_at4(bool is_q, uint i) { return is_q ? xq_at4(i) : xk_at4(i); }
// whole: every lane of texel t is in the tensor (the fast path's texels), so the store skips
// counting them (the accessor's NAME_store_texel).
void out_store(bool is_q, uint t, vec4 v, bool whole) {
  if (whole) {
    if (is_q) xq_out_store_texel(t, v);
    else xk_out_store_texel(t, v);
  } else if (is_q) {
    xq_out_store(t, v);
  } else {
    xk_out_store(t, v);
  }
}

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 8 == 0 (tpi == 2): texel t
// is elements 4t .. 4t+3, two whole pairs of one row, and every texel is whole. Invocation u takes
// texels u and u + half (half = its tensor's invocations), so a warp's loads and stores cover
// consecutive texels; no accessor arithmetic. The table entries a, a+1 (a even) lie in one texel.
const bool kBuffers = xq_is_buffer && xk_is_buffer && freqs_cos_is_buffer && freqs_sin_is_buffer && xq_out_is_buffer &&
                      xk_out_is_buffer;

void fast_texel(bool is_q, uint t, uint D, uint H) {
  uint f0 = 4u * t, d = f0 % D, a = ((f0 / D / H) % pc.S) * pc.hd + d / 2u;
  vec4 x = is_q ? xq_texel(t) : xk_texel(t);
  vec4 c4 = freqs_cos_texel(a >> 2), n4 = freqs_sin_texel(a >> 2);
  vec2 c = (a & 2u) != 0u ? c4.zw : c4.xy, n = (a & 2u) != 0u ? n4.zw : n4.xy;
  vec4 v = vec4(rotate(x.x, x.y, c.x, n.x), rotate(x.z, x.w, c.y, n.y));
  out_store(is_q, t, v, true);
}

// One texel, lane by lane.
vec4 texel(bool is_q, uint t, uint D, uint H) {
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    uint f = out_flat(is_q, t, j);
    if (f == TS_PADDING) continue;
    uint e = f & ~1u;  // the pair's even element (D is even: pairs never straddle rows)
    uint i = (f % D) / 2u, s = (f / D / H) % pc.S;
    vec2 r = rotate(x_at(is_q, e), x_at(is_q, e + 1u), freqs_cos_at(s * pc.hd + i), freqs_sin_at(s * pc.hd + i));
    v[j] = (f & 1u) == 0u ? r.x : r.y;
  }
  return v;
}

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  bool is_q = id < pc.nq;
  if (kBuffers && pc.tpi == 2u) {
    uint u = is_q ? id : id - pc.nq, half_ = is_q ? pc.nq : pc.n - pc.nq;
    uint D = 2u * pc.hd, H = is_q ? pc.Hq : pc.Hkv;
    fast_texel(is_q, u, D, H);
    if (u + half_ < (is_q ? pc.tq : pc.tk)) fast_texel(is_q, u + half_, D, H);
    return;
  }
  uint t = pc.tpi * (is_q ? id : id - pc.nq), count = is_q ? pc.tq : pc.tk, last = t + pc.tpi - 1u;
  uint D = 2u * pc.hd, H = is_q ? pc.Hq : pc.Hkv;
  uint f0 = out_flat(is_q, t, 0u), d = f0 % D;
  bool run = last < count && (f0 & 1u) == 0u && d + 4u * pc.tpi <= D && out_flat(is_q, last, 3u) == f0 + 4u * pc.tpi - 1u &&
             (pc.tpi == 1u || (out_flat(is_q, t, 3u) == f0 + 3u && out_flat(is_q, t + 1u, 0u) == f0 + 4u));
  if (run) {
    uint a = ((f0 / D / H) % pc.S) * pc.hd + d / 2u;  // table entries a, a+1, ...
    vec4 x0 = x_at4(is_q, f0);
    if (pc.tpi == 1u) {
      out_store(is_q, t, vec4(rotate(x0.x, x0.y, freqs_cos_at(a), freqs_sin_at(a)),
                              rotate(x0.z, x0.w, freqs_cos_at(a + 1u), freqs_sin_at(a + 1u))), false);
      return;
    }
    vec4 x1 = x_at4(is_q, f0 + 4u), c = freqs_cos_at4(a), n = freqs_sin_at4(a);
    out_store(is_q, t, vec4(rotate(x0.x, x0.y, c.x, n.x), rotate(x0.z, x0.w, c.y, n.y)), false);
    out_store(is_q, t + 1u, vec4(rotate(x1.x, x1.y, c.z, n.z), rotate(x1.z, x1.w, c.w, n.w)), false);
    return;
  }
  for (uint u = t; u <= last && u < count; ++u) out_store(is_q, u, texel(is_q, u, D, H), false);
}
