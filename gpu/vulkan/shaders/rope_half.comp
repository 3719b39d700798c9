// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per element.
layout(std430, binding = 0) readonly buffer X { DTYPE x[]; };
layout(std430, binding = 1) readonly buffer C { DTYPE cos_[]; };
layout(std430, binding = 2) readonly buffer SN { DTYPE sin_[]; };
layout(std430, binding = 3) writeonly buffer O { DTYPE out_[]; };
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uint d = i % pc.D, row = i / pc.D, s = row % pc.S, hd = pc.D / 2;
  float r = d < hd ? -float(x[i + hd]) : float(x[i - hd]);
  out_[i] = DTYPE(float(x[i]) * float(cos_[s * pc.D + d]) + r * float(sin_[s * pc.D + d]));
}
