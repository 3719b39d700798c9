// q8ta_linear, impl=coopmat: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k],
// computed as sum_k x[m,k] * weight[n,k] on int8 tensor cores (16x16x32 cooperative matrices, int32
// accumulators: exact) minus x_zp * sum_k weight[n,k] (x - x_zp does not fit a byte). Both terms are
// exact in int32 (|acc| < 2^31: the operator's k_range), so the result is the tiled kernel's bit for bit.
// A workgroup of 4 subgroups (Dispatch::subgroup = 32) owns a 64x64 tile of out; subgroup s owns the
// 32x32 quarter (s / 2, s % 2), four 16x16 accumulators. K runs in stages of BK bytes: each invocation
// fetches its share of the stage's x rows and weight rows through the layout accessors (any int8
// layout; bytes past K or past M / N are 0, which adds nothing) into registers while the subgroups
// multiply the previous stage from shared memory. The zero-point sums of the weight rows come from the
// same fetches. The epilogue stores by texel as q8ta_gemm_tile.glsl does: a texel whose lane 0 lies in
// the tile is this workgroup's, whole; a lane outside the tile (a buffer word running into the next
// row) is accumulated on its own, and all-padding words after it are stored as 0.
#extension GL_NV_cooperative_matrix : enable
#extension GL_NV_integer_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint M; uint K; uint N; int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias;
} pc;

uint gemm_out_index(uint m, uint n) { return m * pc.N + n; }
uvec2 gemm_out_mn(uint f) { return uvec2(f / pc.N, f % pc.N); }
#include "q8ta_gemm_tile.glsl"

const uint WG = 128u;   // = Dispatch::workgroup: 4 subgroups of 32
const uint BT = 64u;    // the workgroup's tile of out: BT x BT
const uint BK = 128u;   // bytes of K per stage
const uint RW = BK / 16u + 1u;  // a staged row in uvec4, one of padding against bank conflicts
const uint WORDS = BK / 4u / 2u;  // words of one row an invocation fetches per stage (2 per row)

shared uvec4 sx[BT * RW];  // the stage's x rows,      [m][k]
shared uvec4 sw[BT * RW];  // the stage's weight rows, [n][k]
shared int sacc[BT * BT];  // the tile's accumulators, [m][n]
shared int swsum[2u * BT]; // per-invocation weight row sums, combined in the epilogue

// Word `kw` of row `r` (flat offset `ro` = r * K) from k0: 4 bytes, each past K (or the row past
// `rows`) 0. The whole-word fetch where the word lies in the row, byte by byte at the row's end.
uint fetch_x(uint r, uint k) {
  if (r >= pc.M || k >= pc.K) return 0u;
  uint o = r * pc.K + k;
  if (k + 4u <= pc.K) return x_packed4(o);
  uint w = 0u;
  for (uint j = 0u; k + j < pc.K; ++j) w |= (uint(x_at(o + j)) & 0xFFu) << (8u * j);
  return w;
}
uint fetch_w(uint r, uint k) {
  if (r >= pc.N || k >= pc.K) return 0u;
  uint o = r * pc.K + k;
  if (k + 4u <= pc.K) return weight_packed4(o);
  uint w = 0u;
  for (uint j = 0u; k + j < pc.K; ++j) w |= (uint(weight_at(o + j)) & 0xFFu) << (8u * j);
  return w;
}
int byte_sum(uint w) {
  int v = int(w);
  return bitfieldExtract(v, 0, 8) + bitfieldExtract(v, 8, 8) + bitfieldExtract(v, 16, 8) + bitfieldExtract(v, 24, 8);
}

void main() {
  uint tiles_n = (pc.N + BT - 1u) / BT;
  uint g = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (g >= ((pc.M + BT - 1u) / BT) * tiles_n) return;  // a folded grid's spare workgroups: all of them leave
  uint m0 = BT * (g / tiles_n), n0 = BT * (g % tiles_n);
  uint l = ts_local_index();
  // Invocation l fetches row l / 2 of both tiles, words (l % 2) * WORDS .. + WORDS of each stage.
  uint fr = l / 2u, fw = (l % 2u) * WORDS;
  uint s = gl_SubgroupID, sm = 32u * (s / 2u), sn = 32u * (s % 2u);

  icoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2][2];
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < 2u; ++j) acc[i][j] = icoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0);
  uint rx[WORDS], rw[WORDS];
  int wsum = 0;
  for (uint q = 0u; q < WORDS; ++q) {
    rx[q] = fetch_x(m0 + fr, 4u * (fw + q));
    rw[q] = fetch_w(n0 + fr, 4u * (fw + q));
  }
  for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
    barrier();  // every subgroup is done reading the previous stage
    for (uint q = 0u; q < WORDS; q += 4u) {
      sx[fr * RW + (fw + q) / 4u] = uvec4(rx[q], rx[q + 1u], rx[q + 2u], rx[q + 3u]);
      sw[fr * RW + (fw + q) / 4u] = uvec4(rw[q], rw[q + 1u], rw[q + 2u], rw[q + 3u]);
    }
    for (uint q = 0u; q < WORDS; ++q) wsum += byte_sum(rw[q]);  // @marker wsum
    barrier();
    if (k0 + BK < pc.K)
      for (uint q = 0u; q < WORDS; ++q) {
        rx[q] = fetch_x(m0 + fr, k0 + BK + 4u * (fw + q));
        rw[q] = fetch_w(n0 + fr, k0 + BK + 4u * (fw + q));
      }
    for (uint kk = 0u; kk < BK / 16u; kk += 2u) {  // 32 bytes of K per multiply
      icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a[2];
      icoopmatNV<8, gl_ScopeSubgroup, 32, 16> b[2];
      for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], sx, (sm + 16u * i) * RW + kk, RW, false);
      for (uint j = 0u; j < 2u; ++j) coopMatLoadNV(b[j], sw, (sn + 16u * j) * RW + kk, RW, true);
      for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 2u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
  }
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < 2u; ++j) coopMatStoreNV(acc[i][j], sacc, (sm + 16u * i) * BT + sn + 16u * j, BT, false);
  swsum[l] = wsum;
  barrier();

  uint texels = out_texels();
  for (uint e = l; e < BT * BT; e += WG) {
    uint r = m0 + e / BT, c = n0 + e % BT;
    if (r >= pc.M || c >= pc.N) continue;
    uint i = gemm_out_index(r, c), t = out_texel_of(i);
    if (out_flat(t, 0u) != i) continue;
    ivec4 v = ivec4(0);
    for (uint j = 0u; j < 4u; ++j) {
      uint f = out_flat(t, j);
      if (f == TS_PADDING) continue;
      uvec2 mn = gemm_out_mn(f);
      int a;
      if (mn.x >= m0 && mn.x < m0 + BT && mn.y >= n0 && mn.y < n0 + BT) {
        uint cn = mn.y - n0;
        a = sacc[(mn.x - m0) * BT + cn] - pc.x_zp * (swsum[2u * cn] + swsum[2u * cn + 1u]);
      } else {
        a = accumulate(mn.x * pc.K, mn.y * pc.K);
      }
      v[j] = requantize(a, mn.y);
    }
    out_store(t, v);
    for (uint u = t + 1u; u < texels && out_flat(u, 0u) == TS_PADDING; ++u) out_store(u, ivec4(0));
  }
}
