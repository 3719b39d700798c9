// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per output texel, the dot product accumulating in float32 in k order, the texel
// stored once; tensors in any layout (gpu/ACCESSORS.md). When the texel's lanes are 4 consecutive
// elements of one row (lane 3 = lane 0 + 3: uniform lane strides make that contiguity), the 4 lanes
// share each x[k] and read m's row k as one 4-wide load; other texels take the per-lane path. Each
// lane's sum is the same float32 sequence either way: bit-identical results.
TS_INPUT(x, 0)
TS_INPUT(m, 1)
TS_INPUT(cos, 2)
TS_INPUT(sin, 3)
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params { uint n; uint S; uint D; } pc;

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and D % 4 == 0: texel t is
// elements 4t .. 4t+3 of one row: the run path below without its checks.
const bool kBuffers = x_is_buffer && m_is_buffer && cos_is_buffer && sin_is_buffer && out_is_buffer;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  if (kBuffers && (pc.D & 3u) == 0u) {
    uint f0 = 4u * t, d0 = f0 % pc.D, row = f0 / pc.D, base = row * pc.D, tab = (row % pc.S) * pc.D + d0;
    vec4 acc = vec4(0.0);
    for (uint k = 0u; k < pc.D; ++k) acc += x_at(base + k) * m_at4(k * pc.D + d0);
    out_store(t, x_texel(t) * cos_texel(tab >> 2) + acc * sin_texel(tab >> 2));
    return;
  }
  uint f0 = out_flat(t, 0u), d0 = f0 % pc.D;
  vec4 v = vec4(0.0);
  if (out_flat(t, 3u) == f0 + 3u && d0 + 3u < pc.D) {
    uint row = f0 / pc.D, base = row * pc.D, tab = (row % pc.S) * pc.D + d0;
    vec4 acc = vec4(0.0);
    for (uint k = 0u; k < pc.D; ++k) acc += x_at(base + k) * m_at4(k * pc.D + d0);
    v = x_at4(f0) * cos_at4(tab) + acc * sin_at4(tab);
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      uint i = out_flat(t, j);
      if (i == TS_PADDING) continue;
      uint d = i % pc.D, row = i / pc.D, s = row % pc.S, base = row * pc.D;
      float acc = 0.0;
      for (uint k = 0u; k < pc.D; ++k) acc += x_at(base + k) * m_at(k * pc.D + d);
      v[j] = x_at(i) * cos_at(s * pc.D + d) + acc * sin_at(s * pc.D + d);
    }
  }
  out_store(t, v);
}
