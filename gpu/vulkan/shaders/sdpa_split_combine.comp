// sdpa split (flash-decoding), step 2 of 2: for output row (s, h) and its chunks j that hold a key
// the query sees (j * chunk <= pos + s; every such chunk has one, so its m_j is finite),
//   M = max_j m_j,  a_j = exp(m_j - M),  out = (sum_j a_j part_o[j]) * (1 / sum_j a_j l_j),
// float32. The chunk holding M has a_j = 1 and l_j >= 1, so the sum is at least 1.
// 16 invocations per output texel (4 texels per workgroup of 64, Dispatch::workgroup): slice k
// takes chunks k, k + 16, ... in order, and the slices' sums are added in slice order through
// shared memory (the max is exact in any order). Long contexts have hundreds of chunks and decode
// has few output texels (Hq * D / 4): one invocation per texel would leave most of a GPU idle.
// out is a buffer or width-packed with W = D, D % 4 == 0: a texel is 4 consecutive head dims of one
// row. Invocations of spare texels (past n) take part in the barriers and store nothing.
// It also updates the caches: k_cache[pos + s] = k[s], v_cache[pos + s] = v[s] for s < S (a row is
// Hkv*D values, rows contiguous; one invocation per 4 values, an exact copy: k and v, in any layout,
// widen exactly to float32 and round back to the same values). The partial reads those keys from k
// and v, never from the caches, so the rows may be written once it is done (this dispatch), which
// spares the update a dispatch of its own.
layout(std430, binding = 0) readonly buffer PO { vec4 part_o[]; };
layout(std430, binding = 1) readonly buffer PML { vec2 part_ml[]; };
TS_OUTPUT(out, 2)
TS_INPUT(k, 3)
TS_INPUT(v, 4)
layout(std430, binding = 5) writeonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 6) writeonly buffer VC { DTYPE4 v_cache[]; };
layout(push_constant) uniform Params { uint n; uint S; uint Hq; uint Hkv; uint D4; uint pos; uint chunk; uint chunks; } pc;

const uint WG = 64u;  // = Dispatch::workgroup (gpu/plans/sdpa.cpp kSplitWg)
const uint SL = 16u;  // invocations (chunk slices) per texel (kSplitSlices)
const uint CB = 8u;   // chunks a slice holds from its first pass (decode ctx 32768: 128 chunks = 16 * 8)
const float MASKED = -1.0e30;
shared float red_m[WG], red_l[WG];
shared vec4 red_o[WG];

// A chunk's share of the row, rescaled to its max M: a = exp(m_j - M), L += a * l_j, o += a * part_o[j].
void add_chunk(vec2 ml, vec4 po, float M, inout float L, inout vec4 o) {
  float a = exp(ml.x - M);
  L += a * ml.y;
  o += a * po;
}

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = ts_local_index(), k = l % SL, first = l - k, t = w * (WG / SL) + l / SL;
  uint grid = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z * WG;
  for (uint i = w * WG + l; i < pc.S * pc.Hkv * pc.D4; i += grid) {
    k_cache[pc.pos * pc.Hkv * pc.D4 + i] = FROM_VEC4(k_at4(4u * i));
    v_cache[pc.pos * pc.Hkv * pc.D4 + i] = FROM_VEC4(v_at4(4u * i));
  }
  uint b = 0u, d4 = 0u, nv = 0u;
  if (t < pc.n) {
    uint f = out_flat(t, 0u), D = 4u * pc.D4, r = f / D, s = r / pc.Hq;
    d4 = (f % D) / 4u;
    nv = min((pc.pos + s) / pc.chunk + 1u, pc.chunks);
    b = r * pc.chunks;
  }
  // A slice's first CB chunks (m, l) and parts are loaded together, before the max's barrier, and
  // held: one round trip to memory where there were two (later chunks, past 16 * CB, are read again).
  vec2 mlh[CB];
  vec4 oh[CB];
  float M = MASKED;
  for (uint x = 0u; x < CB; ++x) {
    uint j = k + x * SL;
    mlh[x] = j < nv ? part_ml[b + j] : vec2(MASKED, 0.0);
    oh[x] = j < nv ? part_o[(b + j) * pc.D4 + d4] : vec4(0.0);
    M = max(M, mlh[x].x);
  }
  for (uint j = k + CB * SL; j < nv; j += SL) M = max(M, part_ml[b + j].x);
  red_m[l] = M;
  barrier();
  for (uint i = 0u; i < SL; ++i) M = max(M, red_m[first + i]);
  float L = 0.0;
  vec4 o = vec4(0.0);
  for (uint x = 0u; x < CB; ++x)
    if (k + x * SL < nv) add_chunk(mlh[x], oh[x], M, L, o);
  for (uint j = k + CB * SL; j < nv; j += SL) add_chunk(part_ml[b + j], part_o[(b + j) * pc.D4 + d4], M, L, o);
  red_l[l] = L;
  red_o[l] = o;
  barrier();
  if (t < pc.n && k == 0u) {
    for (uint i = 1u; i < SL; ++i) {
      L += red_l[l + i];
      o += red_o[l + i];
    }
    out_store(t, o * (1.0 / L));
  }
}
