// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair j = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per output texel,
// float32 arithmetic, the texel stored once; tensors in any layout (gpu/ACCESSORS.md).
// Bandwidth: when the texel's lanes are 4 consecutive elements starting at an even one (lane 3 =
// lane 0 + 3: uniform lane strides make that contiguity; every buffer texel), they are two whole
// pairs: one 4-wide load of x, and of freqs_cis when the two table pairs are adjacent (not where j
// wraps to 0). Other texels take the per-lane path; both evaluate the same float32 expression per
// element, so results are bit-identical.
TS_INPUT(x, 0)
TS_INPUT(freqs_cis, 1)
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint n; uint nc2; } pc;

vec2 rotate(float a, float b, float c, float s) { return vec2(a * c - b * s, a * s + b * c); }

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and N*C/2 even: texel t is pairs
// 2t, 2t+1 with table pairs j0 = 2t mod N*C/2 (even) and j0 + 1, one table texel; every texel is
// whole. The same expression as the run path below, with no accessor arithmetic.
const bool kBuffers = x_is_buffer && freqs_cis_is_buffer && out_is_buffer;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  bool fast = kBuffers && (pc.nc2 & 1u) == 0u;
  uint f0 = fast ? 4u * t : out_flat(t, 0u);
  vec4 v = vec4(0.0);
  if (fast) {
    vec4 x = x_texel(t), f = freqs_cis_texel(((f0 / 2u) % pc.nc2) >> 1);
    v.xy = rotate(x.x, x.y, f.x, f.y);
    v.zw = rotate(x.z, x.w, f.z, f.w);
  } else if (out_flat(t, 3u) == f0 + 3u && (f0 & 1u) == 0u) {
    vec4 x = x_at4(f0);
    uint j0 = (f0 / 2u) % pc.nc2, j1 = j0 + 1u == pc.nc2 ? 0u : j0 + 1u;
    vec4 f = j1 == j0 + 1u ? freqs_cis_at4(2u * j0)
                           : vec4(freqs_cis_at(2u * j0), freqs_cis_at(2u * j0 + 1u), freqs_cis_at(0u), freqs_cis_at(1u));
    v.xy = rotate(x.x, x.y, f.x, f.y);
    v.zw = rotate(x.z, x.w, f.z, f.w);
  } else {
    for (uint k = 0u; k < 4u; ++k) {
      uint i = out_flat(t, k);
      if (i == TS_PADDING) continue;
      uint p = i / 2u, j = p % pc.nc2;
      vec2 r = rotate(x_at(2u * p), x_at(2u * p + 1u), freqs_cis_at(2u * j), freqs_cis_at(2u * j + 1u));
      v[k] = (i & 1u) == 0u ? r.x : r.y;
    }
  }
  out_store(t, v);
}
