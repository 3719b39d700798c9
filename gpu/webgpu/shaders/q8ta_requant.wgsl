// Included (gpu/kernel_source.h) by the q8ta kernels that reduce into an i32 accumulator
// (q8ta_linear tiled and GEMV, q8ta_conv2d general and GEMM), whose bindings are weight_scales and
// bias and whose uniforms pc hold input_scale, inv_out_scale, out_zp, has_bias.
// Requantization, in float32 (inv_out_scale: 1 / output_scale rounded once on the host):
//   q   = (f32(acc) * input_scale * weight_scales[n] + (has_bias != 0 ? bias[n] : 0)) * inv_out_scale
//   out = clamp(round(q) + out_zp, -128, 127)
// round() is WGSL's, ties to even; the zero point is added after rounding, the clamp is in float.
// Integer dot product (TS_INT_DOT == 1): sum x*w over 4 packed bytes by dot4I8Packed, minus
// x_zp * sum w (x - x_zp does not fit a byte); otherwise (x - x_zp) * w lane by lane. Both are exact
// in i32 (wrapping, and the true sums fit: the operators' k_range), so they agree bit for bit.
const ONES = 0x01010101u;  // dot4I8Packed(w, ONES) = the sum of w's 4 bytes

fn requantize(acc: i32, n: u32) -> i32 {
  let b = select(0.0, bias[n], pc.has_bias != 0u);
  let q = (f32(acc) * pc.input_scale * weight_scales[n] + b) * pc.inv_out_scale;
  return i32(clamp(round(q) + f32(pc.out_zp), -128.0, 127.0));
}
