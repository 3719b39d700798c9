// Included (gpu/kernel_source.h) by the q8ta kernels that reduce into an int32 accumulator
// (q8ta_linear tiled and GEMV, q8ta_conv2d general and GEMM), after their bindings weight_scales and
// bias and their push constants input_scale, inv_out_scale, out_zp, has_bias.
// Requantization, in float32 (inv_out_scale: 1 / output_scale rounded once on the host):
//   q = (float(acc) * input_scale * weight_scales[n] + (has_bias != 0 ? bias[n] : 0)) * inv_out_scale
//   out = clamp(roundEven(q) + out_zp, -128, 127)   (zero point after rounding, clamp in float)
// Integer dot product (TS_INT_DOT: VK_KHR_shader_integer_dot_product through GL_EXT_spirv_intrinsics,
// glslang 12 having no GLSL extension for it): OpSDot of two words of 4 packed int8 (format operand
// 0 = PackedVectorFormat4x8Bit). x - x_zp does not fit a byte, so the dot paths sum x*w and
// subtract x_zp * sum(w); the scalar paths multiply (x - x_zp) * w. Both are exact in int32 (|acc| <
// 2^31: the operators' k_range), so they agree bit for bit.
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
