// The int8 GEMM of q8ta_linear's tiled kernel, included (gpu/kernel_source.h) by it and by
// q8ta_conv2d's im2col GEMM: out(m, n) = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k]
// for x [M, K] and weight [N, K] (push constants M, K, N, x_zp). The includer defines where (m, n)
// lies in out and back: uint gemm_out_index(uint m, uint n) and uvec2 gemm_out_mn(uint flat).
// Invocation g owns the 4x4 tile of out at rows 4*(g / ceil(N/4)).., columns 4*(g % ceil(N/4)):
// 4 x rows and 4 weight rows read once per K step for 16 accumulators. It stores by texel, so every
// output layout works and every texel is written once: the texel whose lane 0 is an element of the
// tile is this invocation's, whole (a lane outside the tile, such as a buffer word running into the
// next row, is computed on its own; padding lanes are 0), with the all-padding words that follow it
// (int8_4w4c words past the last column or width). K's last K % 4 elements are added one at a time
// on both paths.
#include "q8ta_requant.glsl"

// acc of one element: x's row from flat index xo, weight's from wo.
int accumulate(uint xo, uint wo) {
  uint K4 = pc.K - pc.K % 4u;
  int acc = 0;
#ifdef TS_INT_DOT
  int wsum = 0;
  for (uint k = 0u; k < K4; k += 4u) {
    uint w = weight_packed4(wo + k);
    acc += ts_dot4(x_packed4(xo + k), w);
    wsum += ts_dot4(w, TS_ONES);
  }
  acc -= pc.x_zp * wsum;
#else
  for (uint k = 0u; k < K4; k += 4u) acc += ts_idot(x_at4(xo + k) - ivec4(pc.x_zp), weight_at4(wo + k));
#endif
  for (uint k = K4; k < pc.K; ++k) acc += (x_at(xo + k) - pc.x_zp) * weight_at(wo + k);
  return acc;
}

// One K step of a tile: bytes k .. k+3 of its 4 x rows (from xo) and 4 weight rows (from wo), into
// acc and wsum. A macro, not a function: a function's array argument is copied in and out, code
// that a CPU device (lavapipe) then compiles for every call.
#define TILE_STEP(k)                                                                                           \
  {                                                                                                            \
    uvec4 w = uvec4(weight_packed4(wo.x + (k)), weight_packed4(wo.y + (k)), weight_packed4(wo.z + (k)),       \
                    weight_packed4(wo.w + (k)));                                                               \
    wsum += ivec4(ts_dot4(w.x, TS_ONES), ts_dot4(w.y, TS_ONES), ts_dot4(w.z, TS_ONES), ts_dot4(w.w, TS_ONES));  \
    for (uint r = 0u; r < 4u; ++r) {                                                                           \
      uint a = x_packed4(xo[r] + (k));                                                                         \
      acc[r] += ivec4(ts_dot4(a, w.x), ts_dot4(a, w.y), ts_dot4(a, w.z), ts_dot4(a, w.w));                    \
    }                                                                                                          \
  }

void q8ta_gemm_tile(uint g) {
  uint NT = (pc.N + 3u) / 4u;
  if (g >= ((pc.M + 3u) / 4u) * NT) return;
  uint r0 = 4u * (g / NT), c0 = 4u * (g % NT), K = pc.K, K4 = K - K % 4u;
  // Row starts of x and weight; rows past M or N repeat the last one (computed, never stored).
  uvec4 xo = min(uvec4(r0) + uvec4(0u, 1u, 2u, 3u), uvec4(pc.M - 1u)) * K;
  uvec4 wo = min(uvec4(c0) + uvec4(0u, 1u, 2u, 3u), uvec4(pc.N - 1u)) * K;
  ivec4 acc[4] = ivec4[4](ivec4(0), ivec4(0), ivec4(0), ivec4(0));  // acc[row][column] of the tile
#ifdef TS_INT_DOT
  ivec4 wsum = ivec4(0);
  // Two K steps a round where x and weight are buffers: a tile's loop is one long dependent chain
  // where few invocations run (a convolution's small M), so two steps' loads must be in flight at
  // once. Not through a texture layout's accessors: doubled, they are large code, which a CPU device
  // (lavapipe) compiles slowly.
  uint k = 0u;
  if (x_is_buffer && weight_is_buffer)
    for (; k + 4u < K4; k += 8u) {
      TILE_STEP(k)
      TILE_STEP(k + 4u)
    }
  for (; k < K4; k += 4u) TILE_STEP(k)
  for (uint r = 0u; r < 4u; ++r) acc[r] -= pc.x_zp * wsum;
#else
  for (uint k = 0u; k < K4; k += 4u) {
    ivec4 w0 = weight_at4(wo.x + k), w1 = weight_at4(wo.y + k), w2 = weight_at4(wo.z + k), w3 = weight_at4(wo.w + k);
    for (uint r = 0u; r < 4u; ++r) {
      ivec4 a = x_at4(xo[r] + k) - ivec4(pc.x_zp);
      acc[r] += ivec4(ts_idot(a, w0), ts_idot(a, w1), ts_idot(a, w2), ts_idot(a, w3));
    }
  }
#endif
  for (uint k = K4; k < K; ++k) {
    ivec4 w = ivec4(weight_at(wo.x + k), weight_at(wo.y + k), weight_at(wo.z + k), weight_at(wo.w + k));
    for (uint r = 0u; r < 4u; ++r) acc[r] += (x_at(xo[r] + k) - pc.x_zp) * w;
  }

  uint texels = out_texels();
  for (uint r = 0u; r < 4u && r0 + r < pc.M; ++r)
    for (uint c = 0u; c < 4u && c0 + c < pc.N; ++c) {
      uint i = gemm_out_index(r0 + r, c0 + c), t = out_texel_of(i);
      if (out_flat(t, 0u) != i) continue;
      ivec4 v = ivec4(0);
      for (uint j = 0u; j < 4u; ++j) {
        uint f = out_flat(t, j);
        if (f == TS_PADDING) continue;
        uvec2 mn = gemm_out_mn(f);
        // The tile's own value by constant-bound loops: a runtime index into acc would keep the
        // accumulators in memory instead of registers on most GPUs.
        int a = 0;
        bool inside = false;
        for (uint rr = 0u; rr < 4u; ++rr)
          for (uint cc = 0u; cc < 4u; ++cc)
            if (r0 + rr == mn.x && c0 + cc == mn.y) {
              a = acc[rr][cc];
              inside = true;
            }
        if (!inside) a = accumulate(mn.x * K, mn.y * K);
        v[j] = requantize(a, mn.y);
      }
      out_store(t, v);
      for (uint u = t + 1u; u < texels && out_flat(u, 0u) == TS_PADDING; ++u) out_store(u, ivec4(0));
    }
}
