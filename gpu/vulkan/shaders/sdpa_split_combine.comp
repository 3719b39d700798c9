// sdpa split (flash-decoding), step 2 of 2: for output row (s, h) and its chunks j that hold a key
// the query sees (j * chunk <= pos + s; every such chunk has one, so its m_j is finite),
//   M = max_j m_j,  a_j = exp(m_j - M),  out = (sum_j a_j part_o[j]) * (1 / sum_j a_j l_j),
// float32, j in order. The chunk holding M has a_j = 1 and l_j >= 1, so the sum is at least 1.
// One invocation per output texel: out is a buffer or width-packed with W = D, D % 4 == 0, so a
// texel is 4 consecutive head dims of one row.
layout(std430, binding = 0) readonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 1) readonly buffer PML { vec2 part_ml[]; };
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint n; uint Hq; uint D4; uint pos; uint chunk; uint chunks; } pc;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  uint f = out_flat(t, 0u), D = 4u * pc.D4, r = f / D, d4 = (f % D) / 4u, s = r / pc.Hq;
  uint nv = min((pc.pos + s) / pc.chunk + 1u, pc.chunks), b = r * pc.chunks;
  float M = part_ml[b].x;
  for (uint j = 1u; j < nv; ++j) M = max(M, part_ml[b + j].x);
  float L = 0.0;
  vec4 o = vec4(0.0);
  for (uint j = 0u; j < nv; ++j) {
    vec2 ml = part_ml[b + j];
    float a = exp(ml.x - M);
    L += a * ml.y;
    o += a * part_o[(b + j) * pc.D4 + d4];
  }
  out_store(t, o * (1.0 / L));
}
