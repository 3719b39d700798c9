// q8ta_linear, impl=gemv (M = 1): out[0,n] = requantize(acc[n]), acc = sum_k (x[0,k] - x_zp) * weight[n,k].
// Workgroup w (64 invocations: the plan's Dispatch::workgroup) computes texel w of out; its lanes are
// columns n (M = 1: the flat index is the column). Invocation l takes K in groups of 4 at 4l,
// 4l + 256, ... and keeps one partial sum per lane; the K % 4 elements past the last whole group go
// to the invocation whose turn they would be. A tree reduction in shared memory adds the partial
// sums (barriers in uniform control flow: no invocation leaves before them), and invocation 0
// requantizes and stores the texel (padding lanes 0).
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.glsl. K's last
// K % 4 elements are added one at a time on both paths.
// Fast path (weight a buffer, known when compiling, and K % 16 == 0): every weight row starts on a
// 16-byte boundary, so invocation l reads chunk l, l + 64, ... of each of its 4 rows in one 16-byte
// load each (64 invocations cover 1 KiB of a row per step, a warp 512 consecutive bytes), and x's
// 16 matching elements in one load where x is a buffer (else through x_packed4). The same integer
// sums in another order: exact in int32 either way, so its results are bit-identical to the
// general path's, which every other case takes.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint M; uint K; uint N; int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias;
} pc;
#include "q8ta_requant.glsl"

const uint WG = 64u;  // = Dispatch::workgroup; the shared array below is sized by it
shared ivec4 partial[WG];

// Elements 16c .. 16c+15 of x as the bytes of 4 words.
uvec4 x_sixteen(uint c) {
  if (x_is_buffer) return x_chunk(c);
  uint k = 16u * c;
  return uvec4(x_packed4(k), x_packed4(k + 4u), x_packed4(k + 8u), x_packed4(k + 12u));
}

#ifdef TS_INT_DOT
int dot16(uvec4 a, uvec4 b) { return ts_dot4(a.x, b.x) + ts_dot4(a.y, b.y) + ts_dot4(a.z, b.z) + ts_dot4(a.w, b.w); }
#else
int dot16(uvec4 a, uvec4 b) {
  ivec4 zp = ivec4(pc.x_zp);
  return ts_idot(ts_i8_unpack4(a.x) - zp, ts_i8_unpack4(b.x)) + ts_idot(ts_i8_unpack4(a.y) - zp, ts_i8_unpack4(b.y)) +
         ts_idot(ts_i8_unpack4(a.z) - zp, ts_i8_unpack4(b.z)) + ts_idot(ts_i8_unpack4(a.w) - zp, ts_i8_unpack4(b.w));
}
#endif

// The fast path's partial sums of rows n (K % 16 == 0, weight a buffer). STEPS steps of chunks a
// round, all their loads issued before any product (a step past K loads a chunk that exists and adds
// nothing); the weights' byte sums only where the zero point needs them.
const uint STEPS = 4u;
ivec4 fast_sums(uvec4 n, uint l) {
  uint KC = pc.K / 16u;
  uvec4 row = n * KC;  // each row's first chunk
  ivec4 s = ivec4(0), ws = ivec4(0);
  for (uint c = l; c < KC; c += STEPS * WG) {
    uvec4 xa[STEPS], w0[STEPS], w1[STEPS], w2[STEPS], w3[STEPS];
    for (uint j = 0u; j < STEPS; ++j) {
      uint cj = min(c + j * WG, KC - 1u);
      xa[j] = x_sixteen(cj);
      w0[j] = weight_chunk(row.x + cj);
      w1[j] = weight_chunk(row.y + cj);
      w2[j] = weight_chunk(row.z + cj);
      w3[j] = weight_chunk(row.w + cj);
    }
    // @marker chunks_loaded
    for (uint j = 0u; j < STEPS; ++j) {
      if (c + j * WG >= KC) break;
      s += ivec4(dot16(xa[j], w0[j]), dot16(xa[j], w1[j]), dot16(xa[j], w2[j]), dot16(xa[j], w3[j]));
#ifdef TS_INT_DOT
      if (pc.x_zp != 0) {
        const uvec4 ones = uvec4(TS_ONES);
        ws += ivec4(dot16(w0[j], ones), dot16(w1[j], ones), dot16(w2[j], ones), dot16(w3[j], ones));
      }
#endif
    }
  }
  return s - pc.x_zp * ws;
}

void main() {
  // The texel: workgroups of a folded grid count x first, then y, then z (gpu/gpu_backend.cpp).
  uint t = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = ts_local_index();
  bool live = t < out_texels();
  uint K = pc.K, K4 = K - K % 4u;
  ivec4 s = ivec4(0);
  if (live) {
    uvec4 n = uvec4(0u);  // padding lanes read row 0 and are never stored
    for (uint j = 0u; j < 4u; ++j) {
      uint f = out_flat(t, j);
      if (f != TS_PADDING) n[j] = f;
    }
    uvec4 wo = n * K;
    if (weight_is_buffer && K % 16u == 0u) {
      s = fast_sums(n, l);
    } else {
#ifdef TS_INT_DOT
      ivec4 wsum = ivec4(0);
      for (uint k = 4u * l; k < K4; k += 4u * WG) {
        uint a = x_packed4(k);
        uvec4 w = uvec4(weight_packed4(wo.x + k), weight_packed4(wo.y + k), weight_packed4(wo.z + k), weight_packed4(wo.w + k));
        s += ivec4(ts_dot4(a, w.x), ts_dot4(a, w.y), ts_dot4(a, w.z), ts_dot4(a, w.w));
        wsum += ivec4(ts_dot4(w.x, TS_ONES), ts_dot4(w.y, TS_ONES), ts_dot4(w.z, TS_ONES), ts_dot4(w.w, TS_ONES));
      }
      s -= pc.x_zp * wsum;
#else
      for (uint k = 4u * l; k < K4; k += 4u * WG) {
        ivec4 a = x_at4(k) - ivec4(pc.x_zp);
        s += ivec4(ts_idot(a, weight_at4(wo.x + k)), ts_idot(a, weight_at4(wo.y + k)), ts_idot(a, weight_at4(wo.z + k)),
                   ts_idot(a, weight_at4(wo.w + k)));
      }
#endif
      if (K4 < K && l == (K4 / 4u) % WG)
        for (uint k = K4; k < K; ++k) {
          ivec4 w = ivec4(weight_at(wo.x + k), weight_at(wo.y + k), weight_at(wo.z + k), weight_at(wo.w + k));
          s += (x_at(k) - pc.x_zp) * w;
        }
    }
  }
  partial[l] = s;
  for (uint half_ = WG / 2u; half_ > 0u; half_ /= 2u) {
    barrier();
    if (l < half_) partial[l] += partial[l + half_];
  }
  // No barrier: invocation 0 made the last addition into partial[0] itself.
  if (l == 0u && live) {
    ivec4 acc = partial[0];
    ivec4 v = ivec4(0);
    for (uint j = 0u; j < 4u; ++j) {
      uint f = out_flat(t, j);
      if (f != TS_PADDING) v[j] = requantize(acc[j], f);
    }
    out_store(t, v);
  }
}
