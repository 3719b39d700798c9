// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per output texel; each lane computes its own element in float32 and the texel is
// stored once. Tensors in any layout (gpu/ACCESSORS.md).
TS_INPUT(x, 0)
TS_INPUT(cos, 1)
TS_INPUT(sin, 2)
TS_OUTPUT(out, 3)
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  uint hd = pc.D / 2u;
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    uint i = out_flat(t, j);
    if (i == TS_PADDING) continue;
    uint d = i % pc.D, row = i / pc.D, s = row % pc.S;
    float r = d < hd ? -x_at(i + hd) : x_at(i - hd);
    v[j] = x_at(i) * cos_at(s * pc.D + d) + r * sin_at(s * pc.D + d);
  }
  out_store(t, v);
}
