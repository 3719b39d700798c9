// q8ta_conv2d, impl=general (sliding window, any groups): out[n,co,oh,ow] = requantize(acc), with
//   acc = sum_{ci < Cg, kh, kw} (x[n, g*Cg + ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] - x_zp) * weight[co, ci, kh, kw]
// g = co / Cog (Cog = C_out / groups), Cg = C_in / groups; taps outside x are padding and read
// x_zp, so they add 0. One invocation per texel of out (any layout: the accessors' flat index
// [N, C_out, OH, OW]); padding lanes and all-padding texels store 0. The reduction runs over
// r = (ci*KH + kh)*KW + kw, weight's own order, so weight[co] is one contiguous row of Cg*KH*KW.
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.glsl; the dot path
// packs 4 taps into a word (padding as x_zp's byte), sums x*w and subtracts x_zp * sum(w); the
// scalar path multiplies (x - x_zp) * w. The last Kg % 4 taps are added one at a time on both.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint KH; uint KW; uint sh; uint sw; uint ph; uint pw; uint dh; uint dw; uint Cg; uint Cog;
  int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias;
} pc;
#include "q8ta_requant.glsl"

// Tap r of output (n, oh, ow) in the group whose first input channel is c0: x there, or x_zp.
int tap(uint n, uint c0, uint oh, uint ow, uint r) {
  uvec4 xd = x_dims();  // (W, H, C_in, N)
  uint kw = r % pc.KW, kh = (r / pc.KW) % pc.KH, ci = r / (pc.KW * pc.KH);
  int ih = int(oh * pc.sh + kh * pc.dh) - int(pc.ph), iw = int(ow * pc.sw + kw * pc.dw) - int(pc.pw);
  if (ih < 0 || iw < 0 || ih >= int(xd.y) || iw >= int(xd.x)) return pc.x_zp;
  return x_at(((n * xd.z + c0 + ci) * xd.y + uint(ih)) * xd.x + uint(iw));
}

int conv_acc(uint f) {
  uvec4 od = out_dims();  // (OW, OH, C_out, N)
  uint ow = f % od.x, oh = (f / od.x) % od.y, co = (f / (od.x * od.y)) % od.z, n = f / (od.x * od.y * od.z);
  uint c0 = (co / pc.Cog) * pc.Cg;  // the group's first input channel
  uint Kg = pc.Cg * pc.KH * pc.KW, K4 = Kg - Kg % 4u, wo = co * Kg;
  int acc = 0;
#ifdef TS_INT_DOT
  int wsum = 0;
  for (uint r = 0u; r < K4; r += 4u) {
    ivec4 a = ivec4(tap(n, c0, oh, ow, r), tap(n, c0, oh, ow, r + 1u), tap(n, c0, oh, ow, r + 2u), tap(n, c0, oh, ow, r + 3u));
    uvec4 b = uvec4(a) & 255u;
    uint w = weight_packed4(wo + r);
    acc += ts_dot4(b.x | (b.y << 8) | (b.z << 16) | (b.w << 24), w);
    wsum += ts_dot4(w, TS_ONES);
  }
  acc -= pc.x_zp * wsum;
#else
  for (uint r = 0u; r < K4; r += 4u) {
    ivec4 a = ivec4(tap(n, c0, oh, ow, r), tap(n, c0, oh, ow, r + 1u), tap(n, c0, oh, ow, r + 2u), tap(n, c0, oh, ow, r + 3u));
    acc += ts_idot(a - ivec4(pc.x_zp), weight_at4(wo + r));
  }
#endif
  for (uint r = K4; r < Kg; ++r) acc += (tap(n, c0, oh, ow, r) - pc.x_zp) * weight_at(wo + r);
  return acc;
}

void main() {
  uint t = ts_linear_id();
  if (t >= out_texels()) return;
  uint C_out = out_dims().z, plane = out_dims().x * out_dims().y;
  ivec4 v = ivec4(0);
  for (uint j = 0u; j < 4u; ++j) {
    uint f = out_flat(t, j);
    if (f != TS_PADDING) v[j] = requantize(conv_acc(f), (f / plane) % C_out);
  }
  out_store(t, v);
}
