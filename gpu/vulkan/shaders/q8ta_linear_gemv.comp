// q8ta_linear, impl=gemv (M = 1): out[0,n] = requantize(acc[n]), acc = sum_k (x[0,k] - x_zp) * weight[n,k].
// Workgroup w (64 invocations: the plan's Dispatch::workgroup) computes texel w of out; its lanes are
// columns n (M = 1: the flat index is the column). Invocation l takes K in groups of 4 at 4l,
// 4l + 256, ... and keeps one partial sum per lane; the K % 4 elements past the last whole group go
// to the invocation whose turn they would be. A tree reduction in shared memory adds the partial
// sums (barriers in uniform control flow: no invocation leaves before them), and invocation 0
// requantizes and stores the texel (padding lanes 0).
// Requantization, in float32 (inv_out_scale: 1 / output_scale rounded once on the host):
//   q = (float(acc) * input_scale * weight_scales[n] + (has_bias != 0 ? bias[n] : 0)) * inv_out_scale
//   out = clamp(roundEven(q) + out_zp, -128, 127)   (zero point after rounding, clamp in float)
// Integer dot product (TS_INT_DOT: VK_KHR_shader_integer_dot_product through GL_EXT_spirv_intrinsics,
// glslang 12 having no GLSL extension for it): OpSDot of two words of 4 packed int8 (format operand
// 0 = PackedVectorFormat4x8Bit). x - x_zp does not fit a byte, so the dot path sums x*w and
// subtracts x_zp * sum(w); the scalar path multiplies (x - x_zp) * w. Both are exact in int32
// (|acc| < 2^31: reference/q8ta_linear.cpp's k_range), so they agree bit for bit. K's last K % 4
// elements are added one at a time on both paths.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
layout(std430, binding = 2) readonly buffer WeightScales { float weight_scales[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
TS_OUTPUT(out, 4)
layout(push_constant) uniform Params {
  uint M; uint K; uint N; int x_zp; int out_zp; float input_scale; float inv_out_scale; uint has_bias;
} pc;
#ifdef TS_INT_DOT
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int ts_sdot_packed(uint a, uint b, spirv_literal int format);
int ts_dot4(uint a, uint b) { return ts_sdot_packed(a, b, 0); }
const uint TS_ONES = 0x01010101u;  // ts_dot4(w, TS_ONES) = the sum of w's 4 bytes
#endif

int ts_idot(ivec4 a, ivec4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

int requantize(int acc, uint n) {
  float b = pc.has_bias != 0u ? bias[n] : 0.0;
  float q = (float(acc) * pc.input_scale * weight_scales[n] + b) * pc.inv_out_scale;
  return int(clamp(roundEven(q) + float(pc.out_zp), -128.0, 127.0));
}

const uint WG = 64u;  // = Dispatch::workgroup; the shared array below is sized by it
shared ivec4 partial[WG];

void main() {
  // The texel: workgroups of a folded grid count x first, then y, then z (gpu/gpu_backend.cpp).
  uint t = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  uint l = gl_LocalInvocationIndex;
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
  partial[l] = s;
  for (uint half_ = WG / 2u; half_ > 0u; half_ /= 2u) {
    barrier();
    if (l < half_) partial[l] += partial[l + half_];
  }
  barrier();
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
