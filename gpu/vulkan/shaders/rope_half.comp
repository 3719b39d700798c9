// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per output texel, float32 arithmetic, the texel stored once; tensors in any layout
// (gpu/ACCESSORS.md). Bandwidth: when the texel's lanes are 4 consecutive elements (lane 3 = lane 0
// + 3: uniform lane strides make that contiguity) of one row and one half of it (always so for
// buffers with D % 8 == 0), x, its partner run, cos and sin are each one 4-wide load, and the row
// arithmetic is done once. Other texels take the per-lane path; both evaluate the same float32
// expression per element, so results are bit-identical (negation is exact).
TS_INPUT(x, 0)
TS_INPUT(cos, 1)
TS_INPUT(sin, 2)
TS_OUTPUT(out, 3)
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 8 == 0: texel t is
// elements 4t .. 4t+3 of one half of one row, its partner run is texel t -+ D/8 and its table run
// one texel: the same expression as the run path below, with no accessor arithmetic.
const bool kBuffers = x_is_buffer && cos_is_buffer && sin_is_buffer && out_is_buffer;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  uint hd = pc.D / 2u;
  bool fast = kBuffers && (pc.D & 7u) == 0u;
  uint f0 = fast ? 4u * t : out_flat(t, 0u), d0 = f0 % pc.D;
  vec4 v = vec4(0.0);
  if (fast) {
    uint tab = ((f0 / pc.D) % pc.S) * pc.D + d0;
    vec4 r = d0 < hd ? -x_texel(t + hd / 4u) : x_texel(t - hd / 4u);
    v = x_texel(t) * cos_texel(tab >> 2) + r * sin_texel(tab >> 2);
  } else if (out_flat(t, 3u) == f0 + 3u && (d0 + 3u < hd || (d0 >= hd && d0 + 3u < pc.D))) {
    uint tab = ((f0 / pc.D) % pc.S) * pc.D + d0;
    vec4 r = d0 < hd ? -x_at4(f0 + hd) : x_at4(f0 - hd);
    v = x_at4(f0) * cos_at4(tab) + r * sin_at4(tab);
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      uint i = out_flat(t, j);
      if (i == TS_PADDING) continue;
      uint d = i % pc.D, row = i / pc.D, s = row % pc.S;
      float r = d < hd ? -x_at(i + hd) : x_at(i - hd);
      v[j] = x_at(i) * cos_at(s * pc.D + d) + r * sin_at(s * pc.D + d);
    }
  }
  out_store(t, v);
}
