// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per output texel; each lane computes its own element, the dot product accumulating
// in float32 in k order, and the texel is stored once. Tensors in any layout (gpu/ACCESSORS.md).
TS_INPUT(x, 0)
TS_INPUT(m, 1)
TS_INPUT(cos, 2)
TS_INPUT(sin, 3)
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    uint i = out_flat(t, j);
    if (i == TS_PADDING) continue;
    uint d = i % pc.D, row = i / pc.D, s = row % pc.S, base = row * pc.D;
    float acc = 0.0;
    for (uint k = 0u; k < pc.D; ++k) acc += x_at(base + k) * m_at(k * pc.D + d);
    v[j] = x_at(i) * cos_at(s * pc.D + d) + acc * sin_at(s * pc.D + d);
  }
  out_store(t, v);
}
