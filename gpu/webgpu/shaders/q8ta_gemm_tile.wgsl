// The int8 GEMM of q8ta_linear's tiled kernel, included (gpu/kernel_source.h) by it and by
// q8ta_conv2d's im2col GEMM: out(m, n) = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k]
// for x [M, K] and weight [N, K] (uniforms M, K, N, x_zp). The includer defines where (m, n) lies
// in out and back: fn gemm_out_index(m: u32, n: u32) -> u32 and fn gemm_out_mn(f: u32) -> vec2<u32>.
// Invocation g owns the 4x4 tile of out at rows 4*(g / ceil(N/4)).., columns 4*(g % ceil(N/4))..:
// 4 x rows and 4 weight rows read once per K step for 16 accumulators. It stores by texel, so every
// output layout works and every texel is written once: the texel whose lane 0 is an element of the
// tile is this invocation's, whole (a lane outside the tile, such as a buffer word running into the
// next row, is computed on its own; padding lanes are 0), with the all-padding words that follow it
// (int8_4w4c words past the last column or width). K's last K % 4 elements are added one at a time
// on both paths.
#include "q8ta_requant.wgsl"

// acc of one element, for a lane outside the tile: x's row from flat index xo, weight's from wo.
fn accumulate(xo: u32, wo: u32) -> i32 {
  let K4 = pc.K - pc.K % 4u;
  var acc = 0;
  var wsum = 0;
  for (var k = 0u; k < K4; k += 4u) {
    if (TS_INT_DOT == 1) {
      let w = weight_packed4(wo + k);
      acc += dot4I8Packed(x_packed4(xo + k), w);
      wsum += dot4I8Packed(w, ONES);
    } else {
      acc += dot(x_at4(xo + k) - vec4<i32>(pc.x_zp), weight_at4(wo + k));
    }
  }
  acc -= pc.x_zp * wsum;
  for (var k = K4; k < pc.K; k++) { acc += (x_at(xo + k) - pc.x_zp) * weight_at(wo + k); }
  return acc;
}

fn q8ta_gemm_tile(g: u32) {
  let NT = (pc.N + 3u) / 4u;
  if (g >= ((pc.M + 3u) / 4u) * NT) { return; }
  let r0 = 4u * (g / NT);
  let c0 = 4u * (g % NT);
  let K = pc.K;
  let K4 = K - K % 4u;
  // Row starts of x and weight; rows past M or N repeat the last one (computed, never stored).
  let xo = vec4<u32>(min(r0, pc.M - 1u), min(r0 + 1u, pc.M - 1u), min(r0 + 2u, pc.M - 1u), min(r0 + 3u, pc.M - 1u)) * K;
  let wo = vec4<u32>(min(c0, pc.N - 1u), min(c0 + 1u, pc.N - 1u), min(c0 + 2u, pc.N - 1u), min(c0 + 3u, pc.N - 1u)) * K;
  var acc: array<vec4<i32>, 4>;  // acc[row][column] of the tile
  var wsum = vec4<i32>(0);
  for (var k = 0u; k < K4; k += 4u) {
    if (TS_INT_DOT == 1) {
      let w = vec4<u32>(weight_packed4(wo.x + k), weight_packed4(wo.y + k), weight_packed4(wo.z + k), weight_packed4(wo.w + k));
      wsum += vec4<i32>(dot4I8Packed(w.x, ONES), dot4I8Packed(w.y, ONES), dot4I8Packed(w.z, ONES), dot4I8Packed(w.w, ONES));
      for (var r = 0u; r < 4u; r++) {
        let a = x_packed4(xo[r] + k);
        acc[r] += vec4<i32>(dot4I8Packed(a, w.x), dot4I8Packed(a, w.y), dot4I8Packed(a, w.z), dot4I8Packed(a, w.w));
      }
    } else {
      let w0 = weight_at4(wo.x + k);
      let w1 = weight_at4(wo.y + k);
      let w2 = weight_at4(wo.z + k);
      let w3 = weight_at4(wo.w + k);
      for (var r = 0u; r < 4u; r++) {
        let a = x_at4(xo[r] + k) - vec4<i32>(pc.x_zp);
        acc[r] += vec4<i32>(dot(a, w0), dot(a, w1), dot(a, w2), dot(a, w3));
      }
    }
  }
  for (var r = 0u; r < 4u; r++) { acc[r] -= pc.x_zp * wsum; }
  for (var k = K4; k < K; k++) {
    let w = vec4<i32>(weight_at(wo.x + k), weight_at(wo.y + k), weight_at(wo.z + k), weight_at(wo.w + k));
    for (var r = 0u; r < 4u; r++) { acc[r] += (x_at(xo[r] + k) - pc.x_zp) * w; }
  }

  let texels = out_texels();
  for (var r = 0u; r < 4u && r0 + r < pc.M; r++) {
    for (var c = 0u; c < 4u && c0 + c < pc.N; c++) {
      let i = gemm_out_index(r0 + r, c0 + c);
      let t = out_texel_of(i);
      if (out_flat(t, 0u) != i) { continue; }
      var v = vec4<i32>(0);
      for (var j = 0u; j < 4u; j++) {
        let f = out_flat(t, j);
        if (f == TS_PAD) { continue; }
        let mn = gemm_out_mn(f);
        // The tile's own value, found by constant-bound loops: a runtime index into acc would keep
        // the accumulators in memory instead of registers on most GPUs.
        var a = 0;
        var inside = false;
        for (var rr = 0u; rr < 4u; rr++) {
          for (var cc = 0u; cc < 4u; cc++) {
            if (r0 + rr == mn.x && c0 + cc == mn.y) {
              a = acc[rr][cc];
              inside = true;
            }
          }
        }
        if (!inside) { a = accumulate(mn.x * K, mn.y * K); }
        v[j] = requantize(a, mn.y);
      }
      out_store(t, v);
      for (var u = t + 1u; u < texels && out_flat(u, 0u) == TS_PAD; u++) { out_store(u, vec4<i32>(0)); }
    }
  }
}
