// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair j = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per output texel;
// each lane computes its own element (reading its pair partner) in float32 and the texel is stored
// once. Tensors in any layout (gpu/ACCESSORS.md).
TS_INPUT(x, 0)
TS_INPUT(freqs_cis, 1)
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint n; uint nc2; } pc;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  vec4 v = vec4(0.0);
  for (uint k = 0u; k < 4u; ++k) {
    uint f = out_flat(t, k);
    if (f == TS_PADDING) continue;
    uint p = f / 2u, j = p % pc.nc2;
    float c = freqs_cis_at(2u * j), s = freqs_cis_at(2u * j + 1u);
    float a = x_at(2u * p), b = x_at(2u * p + 1u);
    v[k] = (f & 1u) == 0u ? a * c - b * s : a * s + b * c;
  }
  out_store(t, v);
}
