// q8ta_linear, impl=coopmat: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k],
// computed as sum_k x[m,k] * weight[n,k] on int8 tensor cores (16x16x32 cooperative matrices, int32
// accumulators: exact) minus x_zp * sum_k weight[n,k] (x - x_zp does not fit a byte). Both terms are
// exact in int32 (|acc| < 2^31: the operator's k_range), so the result is the tiled kernel's bit for bit.
// A workgroup of 4 subgroups (Dispatch::subgroup = 32) owns a BT x BT tile of out (BT = 64, or 32 where
// the plan wants more workgroups: the define BT); subgroup s owns the quarter (s / 2, s % 2), FM x FM
// 16x16 accumulators (FM = BT / 32). K runs in stages of BK bytes through two shared buffers: while
// the subgroups multiply one stage, the invocations' loads of the next are in flight (16-byte chunks,
// 8 invocations a row: a subgroup reads 4 whole rows at once), and they go into the other buffer
// after the products, so a stage costs one barrier. Chunks come straight from buffers where x and
// weight are buffers and K % 16 == 0, else word by word through the layout accessors (any int8
// layout); bytes past K or past M / N are 0, which adds nothing. Every loop over fragments or chunks
// is unrolled: arrays of cooperative matrices indexed at run time would live in local memory.
// The zero-point sums of the weight rows come from the staged chunks themselves: each invocation adds
// the bytes of the weight chunks it stages (always the same rows, K columns 16 * (l % 8) mod BK) and
// the 8 invocations of a row add theirs into swsum at the end. The epilogue reads the accumulators
// back from the stage buffers (stored over them as int bits): a buffer out with N % 4 == 0 is stored
// a word (4 columns of a row) per invocation; any other out by texel as q8ta_gemm_tile.glsl does: a
// texel whose lane 0 lies in the tile is this workgroup's, whole; a lane outside the tile (a buffer
// word running into the next row) is accumulated on its own, and all-padding words after it are
// stored as 0.
#extension GL_NV_cooperative_matrix : enable
#extension GL_NV_integer_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_control_flow_attributes : enable
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

// The plan's defines (gpu/plans/q8ta_linear.cpp): NI, the workgroup's invocations (4 subgroups of 32);
// BT, its tile of out: BT x BT.
const uint FM = BT / 32u;       // 16x16 accumulators per dimension a subgroup
const uint BK = 128u;           // bytes of K per stage
const uint CH = BK / 16u;       // 16-byte chunks of a staged row
const uint RW = CH + 1u;        // a staged row in uvec4, one of padding against bank conflicts
const uint RPASS = NI / CH;     // rows fetched per pass of the workgroup
const uint PASSES = BT / RPASS; // passes a stage, per tile
const uint STAGE = 2u * BT * RW;                  // one stage in uvec4: x rows [m][k], then weight rows [n][k]
const uint SMEM = max(2u * STAGE, BT * BT / 4u);  // two stages; after them the accumulators [m][n]

shared uvec4 sbuf[SMEM];
shared int swsum[BT];

// Bytes k .. k+15 of row r of weight (w) or x (rows past N or M, bytes past K: 0). `fast`: both
// tensors are buffers and K % 16 == 0, so the chunk is one 16-byte load. `w` is a constant at every
// call: the compiler keeps one tensor's branch.
uvec4 fetch(bool w, uint r, uint k, bool fast) {
  if (r >= (w ? pc.N : pc.M) || k >= pc.K) return uvec4(0u);
  uint o = r * pc.K + k;
  if (fast) return w ? weight_chunk(o >> 4) : x_chunk(o >> 4);
  uvec4 v = uvec4(0u);
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    uint kj = k + 4u * j, oj = o + 4u * j;
    if (kj + 4u <= pc.K) v[j] = w ? weight_packed4(oj) : x_packed4(oj);
    else
      for (uint b = 0u; kj + b < pc.K; ++b) v[j] |= (uint(w ? weight_at(oj + b) : x_at(oj + b)) & 0xFFu) << (8u * b);
  }
  return v;
}

// The sum of a chunk's 16 signed bytes.
int bytesum(uvec4 v) {
#ifdef TS_INT_DOT
  return ts_dot4(v.x, TS_ONES) + ts_dot4(v.y, TS_ONES) + ts_dot4(v.z, TS_ONES) + ts_dot4(v.w, TS_ONES);
#else
  ivec4 s = ts_i8_unpack4(v.x) + ts_i8_unpack4(v.y) + ts_i8_unpack4(v.z) + ts_i8_unpack4(v.w);
  return s.x + s.y + s.z + s.w;
#endif
}

uint fr, fc;      // this invocation stages chunk fc of rows fr + RPASS * p
int ws[PASSES];   // the byte sums of the weight chunks it staged, per row

// Pass p's chunks of stage st into the stage buffer at `at`.
void put(uint at, uint p, uvec4 x, uvec4 w, uint st) {
  sbuf[at + (fr + RPASS * p) * RW + fc] = x;
  sbuf[at + BT * RW + (fr + RPASS * p) * RW + fc] = w;  // @marker stage_w
  ws[p] += bytesum(w);
}

void main() {
  uint tiles_n = (pc.N + BT - 1u) / BT;
  uint g = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (g >= ((pc.M + BT - 1u) / BT) * tiles_n) return;  // a folded grid's spare workgroups: all of them leave
  uint m0 = BT * (g / tiles_n), n0 = BT * (g % tiles_n);
  uint l = ts_local_index();
  bool fast = x_is_buffer && weight_is_buffer && pc.K % 16u == 0u;
  fr = l / CH, fc = l % CH;
  uint s = gl_SubgroupID, sm = (BT / 2u) * (s / 2u), sn = (BT / 2u) * (s % 2u);

  icoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FM];
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FM; ++j) acc[i][j] = icoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0);
  if (l < BT) swsum[l] = 0;  // ordered before the atomics by the stages' barriers
  uvec4 rx[PASSES], rw[PASSES];
  [[unroll]] for (uint p = 0u; p < PASSES; ++p) {
    ws[p] = 0;
    rx[p] = fetch(false, m0 + fr + RPASS * p, 16u * fc, fast);
    rw[p] = fetch(true, n0 + fr + RPASS * p, 16u * fc, fast);
  }
  [[unroll]] for (uint p = 0u; p < PASSES; ++p) put(0u, p, rx[p], rw[p], 0u);
  barrier();
  uint stages = (pc.K + BK - 1u) / BK;
  for (uint st = 0u; st < stages; ++st) {
    uint cur = (st & 1u) * STAGE, nxt = STAGE - cur;
    bool more = st + 1u < stages;
    if (more)
      [[unroll]] for (uint p = 0u; p < PASSES; ++p) {
        rx[p] = fetch(false, m0 + fr + RPASS * p, (st + 1u) * BK + 16u * fc, fast);
        rw[p] = fetch(true, n0 + fr + RPASS * p, (st + 1u) * BK + 16u * fc, fast);
      }
    [[unroll]] for (uint kk = 0u; kk < CH; kk += 2u) {
      icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a[FM];
      icoopmatNV<8, gl_ScopeSubgroup, 32, 16> b[FM];
      [[unroll]] for (uint i = 0u; i < FM; ++i) coopMatLoadNV(a[i], sbuf, cur + (sm + 16u * i) * RW + kk, RW, false);
      [[unroll]] for (uint j = 0u; j < FM; ++j) coopMatLoadNV(b[j], sbuf, cur + BT * RW + (sn + 16u * j) * RW + kk, RW, true);
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        [[unroll]] for (uint j = 0u; j < FM; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    if (more)
      [[unroll]] for (uint p = 0u; p < PASSES; ++p) put(nxt, p, rx[p], rw[p], st + 1u);
    barrier();  // this stage's reads and the next one's stores are done
  }
  // The last barrier ended every read of the stages: the accumulators go over them.
  [[unroll]] for (uint p = 0u; p < PASSES; ++p) atomicAdd(swsum[fr + RPASS * p], ws[p]);
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FM; ++j)
      coopMatStoreNV(acc[i][j], sbuf, ((sm + 16u * i) * BT + sn + 16u * j) / 4u, BT / 4u, false);
  barrier();

  // A buffer out whose rows are whole words (N % 4 == 0): every word of the tile is 4 columns of one
  // row, all inside the tile, so invocation l stores words l, l + NI, ... of it (consecutive
  // invocations, consecutive words of a row) with the same requantization as below.
  if (out_is_buffer && pc.N % 4u == 0u) {
    for (uint q = l; q < BT * BT / 4u; q += NI) {
      uint r = q / (BT / 4u), c = 4u * (q % (BT / 4u));
      if (m0 + r >= pc.M || n0 + c >= pc.N) continue;
      ivec4 a4 = ivec4(sbuf[q]);
      ivec4 v;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) v[j] = requantize(a4[j] - pc.x_zp * swsum[c + j], n0 + c + j);
      out_store_word(((m0 + r) * pc.N + n0 + c) / 4u, ts_i8_pack4(v));
    }
    return;
  }
  uint texels = out_texels();
  for (uint e = l; e < BT * BT; e += NI) {
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
        uint at = (mn.x - m0) * BT + mn.y - n0;
        a = int(sbuf[at >> 2][at & 3u]) - pc.x_zp * swsum[mn.y - n0];
      } else
        a = accumulate(mn.x * pc.K, mn.y * pc.K);
      v[j] = requantize(a, mn.y);
    }
    out_store(t, v);
    for (uint u = t + 1u; u < texels && out_flat(u, 0u) == TS_PADDING; ++u) out_store(u, ivec4(0));
  }
}
