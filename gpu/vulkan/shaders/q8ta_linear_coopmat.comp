// q8ta_linear, impl=coopmat: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k],
// computed as sum_k x[m,k] * weight[n,k] on int8 tensor cores (16x16x32 cooperative matrices, int32
// accumulators: exact) minus x_zp * sum_k weight[n,k] (x - x_zp does not fit a byte). Both terms are
// exact in int32 (|acc| < 2^31: the operator's k_range), so the result is the tiled kernel's bit for bit.
// A workgroup of 4 subgroups (Dispatch::subgroup = 32) owns a BT x BT tile of out (BT = 64, or 32 where
// the plan wants more workgroups: the define BT); subgroup s owns the quarter (s / 2, s % 2), FM x FM
// 16x16 accumulators (FM = BT / 32). K runs in stages of BK bytes: the invocations
// fetch the stage's x rows and weight rows in 16-byte chunks (8 invocations a row: a subgroup reads 4
// whole rows at once) into registers while the subgroups multiply the previous stage from shared
// memory. Chunks come straight from buffers where x and weight are buffers and K % 16 == 0, else
// word by word through the layout accessors (any int8 layout); bytes past K or past M / N are 0,
// which adds nothing. The zero-point sums of the weight rows are a product too: subgroups 0 and 1
// (all the tile's columns) multiply a matrix of ones by each weight fragment. The epilogue: a buffer
// out with N % 4 == 0 is stored a word (4 columns of a row) per invocation; any other out by texel
// as q8ta_gemm_tile.glsl does: a texel whose lane 0 lies in the tile is this workgroup's, whole; a
// lane outside the tile (a buffer word running into the next row) is accumulated on its own, and
// all-padding words after it are stored as 0.
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
#ifndef BT
#define BT 64u          // the workgroup's tile of out: BT x BT (gpu/plans/q8ta_linear.cpp)
#endif
const uint FM = BT / 32u;       // 16x16 accumulators per dimension a subgroup
const uint BK = 128u;   // bytes of K per stage
const uint CH = BK / 16u;       // 16-byte chunks of a staged row
const uint RW = CH + 1u;        // a staged row in uvec4, one of padding against bank conflicts
const uint RPASS = WG / CH;     // rows fetched per pass of the workgroup
const uint PASSES = BT / RPASS; // passes a stage, per tile

shared uvec4 sx[BT * RW];  // the stage's x rows,      [m][k]
shared uvec4 sw[BT * RW];  // the stage's weight rows, [n][k]
shared int sacc[BT * BT];  // the tile's accumulators, [m][n]
shared int swsum[16u * BT];// the weight rows' sums (16 equal rows of the ones product), [.][n]

// Bytes k .. k+15 of row r of weight (w) or x (rows past N or M, bytes past K: 0). `fast`: both
// tensors are buffers and K % 16 == 0, so the chunk is one 16-byte load. `w` is a constant at every
// call: the compiler keeps one tensor's branch.
uvec4 fetch(bool w, uint r, uint k, bool fast) {
  if (r >= (w ? pc.N : pc.M) || k >= pc.K) return uvec4(0u);
  uint o = r * pc.K + k;
  if (fast) return w ? weight_chunk(o >> 4) : x_chunk(o >> 4);
  uvec4 v = uvec4(0u);
  for (uint j = 0u; j < 4u; ++j) {
    uint kj = k + 4u * j, oj = o + 4u * j;
    if (kj + 4u <= pc.K) v[j] = w ? weight_packed4(oj) : x_packed4(oj);
    else
      for (uint b = 0u; kj + b < pc.K; ++b) v[j] |= (uint(w ? weight_at(oj + b) : x_at(oj + b)) & 0xFFu) << (8u * b);
  }
  return v;
}

void main() {
  uint tiles_n = (pc.N + BT - 1u) / BT;
  uint g = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (g >= ((pc.M + BT - 1u) / BT) * tiles_n) return;  // a folded grid's spare workgroups: all of them leave
  uint m0 = BT * (g / tiles_n), n0 = BT * (g % tiles_n);
  uint l = ts_local_index();
  bool fast = x_is_buffer && weight_is_buffer && pc.K % 16u == 0u;
  // Invocation l fetches chunk l % CH of rows l / CH + RPASS * p.
  uint fr = l / CH, fc = l % CH;
  uint s = gl_SubgroupID, sm = (BT / 2u) * (s / 2u), sn = (BT / 2u) * (s % 2u);
  bool sums = s < 2u;  // subgroups 0 and 1 cover every column: they also sum the weight rows

  icoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FM], accw[FM];
  for (uint i = 0u; i < FM; ++i) {
    accw[i] = icoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0);
    for (uint j = 0u; j < FM; ++j) acc[i][j] = icoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0);
  }
  const icoopmatNV<8, gl_ScopeSubgroup, 16, 32> ones = icoopmatNV<8, gl_ScopeSubgroup, 16, 32>(int8_t(1));
  uvec4 rx[PASSES], rw[PASSES];
  for (uint p = 0u; p < PASSES; ++p) {
    rx[p] = fetch(false, m0 + fr + RPASS * p, 16u * fc, fast);
    rw[p] = fetch(true, n0 + fr + RPASS * p, 16u * fc, fast);
  }
  for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
    barrier();  // every subgroup is done reading the previous stage
    for (uint p = 0u; p < PASSES; ++p) {
      sx[(fr + RPASS * p) * RW + fc] = rx[p];
      sw[(fr + RPASS * p) * RW + fc] = rw[p];  // @marker stage_w
    }
    barrier();
    if (k0 + BK < pc.K)
      for (uint p = 0u; p < PASSES; ++p) {
        rx[p] = fetch(false, m0 + fr + RPASS * p, k0 + BK + 16u * fc, fast);
        rw[p] = fetch(true, n0 + fr + RPASS * p, k0 + BK + 16u * fc, fast);
      }
    for (uint kk = 0u; kk < CH; kk += 2u) {  // 32 bytes of K per multiply
      icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a[FM];
      icoopmatNV<8, gl_ScopeSubgroup, 32, 16> b[FM];
      for (uint i = 0u; i < FM; ++i) coopMatLoadNV(a[i], sx, (sm + 16u * i) * RW + kk, RW, false);
      for (uint j = 0u; j < FM; ++j) coopMatLoadNV(b[j], sw, (sn + 16u * j) * RW + kk, RW, true);
      for (uint i = 0u; i < FM; ++i)
        for (uint j = 0u; j < FM; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
      if (sums)
        for (uint j = 0u; j < FM; ++j) accw[j] = coopMatMulAddNV(ones, b[j], accw[j]);
    }
  }
  for (uint i = 0u; i < FM; ++i)
    for (uint j = 0u; j < FM; ++j) coopMatStoreNV(acc[i][j], sacc, (sm + 16u * i) * BT + sn + 16u * j, BT, false);
  if (sums)
    for (uint j = 0u; j < FM; ++j) coopMatStoreNV(accw[j], swsum, sn + 16u * j, BT, false);
  barrier();

  // A buffer out whose rows are whole words (N % 4 == 0): every word of the tile is 4 columns of one
  // row, all inside the tile, so invocation l stores words l, l + WG, ... of it (consecutive
  // invocations, consecutive words of a row) with the same requantization as below.
  if (out_is_buffer && pc.N % 4u == 0u) {
    for (uint q = l; q < BT * BT / 4u; q += WG) {
      uint r = q / (BT / 4u), c = 4u * (q % (BT / 4u));
      if (m0 + r >= pc.M || n0 + c >= pc.N) continue;
      ivec4 v;
      for (uint j = 0u; j < 4u; ++j)
        v[j] = requantize(sacc[r * BT + c + j] - pc.x_zp * swsum[c + j], n0 + c + j);
      out_store_word(((m0 + r) * pc.N + n0 + c) / 4u, ts_i8_pack4(v));
    }
    return;
  }
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
      if (mn.x >= m0 && mn.x < m0 + BT && mn.y >= n0 && mn.y < n0 + BT)
        a = sacc[(mn.x - m0) * BT + mn.y - n0] - pc.x_zp * swsum[mn.y - n0];
      else
        a = accumulate(mn.x * pc.K, mn.y * pc.K);
      v[j] = requantize(a, mn.y);
    }
    out_store(t, v);
    for (uint u = t + 1u; u < texels && out_flat(u, 0u) == TS_PADDING; ++u) out_store(u, ivec4(0));
  }
}
