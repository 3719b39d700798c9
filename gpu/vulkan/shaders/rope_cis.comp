// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair j = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per pair.
layout(std430, binding = 0) readonly buffer X { DTYPE x[]; };
layout(std430, binding = 1) readonly buffer F { DTYPE freqs_cis[]; };
layout(std430, binding = 2) writeonly buffer O { DTYPE out_[]; };
layout(push_constant) uniform Params { uint n; uint nc2; } pc;

void main() {
  uint p = ts_linear_id();
  if (p >= pc.n) return;
  uint j = p % pc.nc2;
  float c = float(freqs_cis[2 * j]), s = float(freqs_cis[2 * j + 1]);
  float a = float(x[2 * p]), b = float(x[2 * p + 1]);
  out_[2 * p] = DTYPE(a * c - b * s);
  out_[2 * p + 1] = DTYPE(a * s + b * c);
}
