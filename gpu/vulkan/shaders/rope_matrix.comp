// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per element; the dot product accumulates in float32 in k order.
layout(std430, binding = 0) readonly buffer X { DTYPE x[]; };
layout(std430, binding = 1) readonly buffer M { DTYPE m[]; };
layout(std430, binding = 2) readonly buffer C { DTYPE cos_[]; };
layout(std430, binding = 3) readonly buffer SN { DTYPE sin_[]; };
layout(std430, binding = 4) writeonly buffer O { DTYPE out_[]; };
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uint d = i % pc.D, row = i / pc.D, s = row % pc.S, base = row * pc.D;
  float acc = 0.0;
  for (uint k = 0; k < pc.D; ++k) acc += float(x[base + k]) * float(m[k * pc.D + d]);
  out_[i] = DTYPE(float(x[i]) * float(cos_[s * pc.D + d]) + acc * float(sin_[s * pc.D + d]));
}
