// q8ta_add: out = clamp(roundEven(q) + out_zp, -128, 127) with, element by element,
//   q = (a_scale * float(a - a_zp) + b_scale * float(b - b_zp)) * inv_out_scale     (float32)
// The zero point is added after rounding and the clamp is in float (a huge q never reaches an int
// conversion). inv_out_scale is 1 / output_scale rounded once to float32 on the host
// (gpu/plans/q8ta_add.cpp). One invocation per texel (32-bit word) of out, padding lanes 0 (the
// accessor); a, b and out each in any int8 layout (gpu/ACCESSORS.md), element by element.
TS_INPUT(a, 0)
TS_INPUT(b, 1)
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params {
  float a_scale; float b_scale; float inv_out_scale; int a_zp; int b_zp; int out_zp; uint n;
} pc;

int requantize(float q) {
  return int(clamp(roundEven(q) + float(pc.out_zp), -128.0, 127.0));
}

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  ivec4 v = ivec4(0);
  for (uint j = 0u; j < 4u; ++j) {
    uint i = out_flat(t, j);
    if (i == TS_PADDING) continue;
    float q = (pc.a_scale * float(a_at(i) - pc.a_zp) + pc.b_scale * float(b_at(i) - pc.b_zp)) * pc.inv_out_scale;
    v[j] = requantize(q);
  }
  out_store(t, v);
}
