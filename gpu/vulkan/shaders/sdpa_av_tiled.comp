// sdpa AV (tiled): the output of sdpa_av_naive, 4 queries x 4 head dims per invocation: for the
// invocation's (h, query tile s0 = 4*st, head-dim vec4 d4), i in [0, 4),
//   out[s0+i, h, 4*d4 : 4*d4+4] = sum_{c < ctx} p[h, s0+i, c] * v_cache[c, kvh, 4*d4 : 4*d4+4].
// Each context row's V is one load of 4 contiguous head-dim lanes (v_cache binds as a vec4 array,
// D % 4 == 0), scaled by each query's weight; accumulation per lane in c order, float32. The 4 head
// dims are one texel of out in its layouts (buffer, texture3d_w: gpu/ACCESSORS.md).
// The context loop is a branch-free body over whole groups of 4 rows, then one checked ragged tail
// of ctx % 4 rows. Queries past S read a clamped, valid score row and are not stored.
layout(std430, binding = 0) readonly buffer SC { float scores[]; };
layout(std430, binding = 1) readonly buffer VC { DTYPE4 v_cache[]; };
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint ctx; } pc;

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  uint s_tiles = (pc.S + 3) / 4;
  uint d4 = id % pc.D4, rest = id / pc.D4, st = rest % s_tiles, h = rest / s_tiles;
  uint s0 = st * 4, kvh = h / (pc.Hq / pc.Hkv);
  uint vstride = pc.Hkv * pc.D4, vb = kvh * pc.D4 + d4;  // v_cache row stride and lane offset, in vec4s
  uint pb[4];
  for (uint i = 0; i < 4; ++i) pb[i] = (h * pc.S + min(s0 + i, pc.S - 1)) * pc.ctx;
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  uint aligned = pc.ctx - pc.ctx % 4;
  for (uint c = 0; c < aligned; c += 4) {
    vec4 vv[4];
    for (uint j = 0; j < 4; ++j) vv[j] = TO_VEC4(v_cache[(c + j) * vstride + vb]);
    for (uint i = 0; i < 4; ++i) {
      vec4 p = vec4(scores[pb[i] + c], scores[pb[i] + c + 1], scores[pb[i] + c + 2], scores[pb[i] + c + 3]);
      acc[i] += p.x * vv[0];
      acc[i] += p.y * vv[1];
      acc[i] += p.z * vv[2];
      acc[i] += p.w * vv[3];
    }
  }
  for (uint c = aligned; c < pc.ctx; ++c) {
    vec4 vv = TO_VEC4(v_cache[c * vstride + vb]);
    for (uint i = 0; i < 4; ++i) acc[i] += scores[pb[i] + c] * vv;
  }
  for (uint i = 0; i < 4 && s0 + i < pc.S; ++i) out_store(out_texel_of(4u * (((s0 + i) * pc.Hq + h) * pc.D4 + d4)), acc[i]);
}
