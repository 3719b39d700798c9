// q8ta_add: out = clamp(roundEven(q) + out_zp, -128, 127) with, element by element,
//   q = (a_scale * float(a - a_zp) + b_scale * float(b - b_zp)) * inv_out_scale     (float32)
// The zero point is added after rounding and the clamp is in float (a huge q never reaches an int
// conversion). inv_out_scale is 1 / output_scale rounded once to float32 on the host
// (gpu/plans/q8ta_add.cpp). a, b and out each in any int8 layout (gpu/ACCESSORS.md).
// General path: one invocation per texel (32-bit word) of out, element by element through the
// accessors, padding lanes 0 (the accessor).
// Buffer fast path (a, b and out all buffers, known when compiling; the plan then gives one
// invocation per 16-byte chunk of out): invocation u takes words 4u .. 4u+3 of all three, so a
// warp's loads and stores are consecutive 16-byte chunks, in one load of a and b and one store of
// out when the chunk lies inside the tensor; the last, partial chunk goes word by word, its last
// partial word through out_store (which keeps the guard's bytes). Both paths compute each element
// with add_one(), so their results are bit-identical.
TS_INPUT(a, 0)
TS_INPUT(b, 1)
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params {
  float a_scale; float b_scale; float inv_out_scale; int a_zp; int b_zp; int out_zp; uint n;
} pc;

int requantize(float q) {
  return int(clamp(roundEven(q) + float(pc.out_zp), -128.0, 127.0));
}

int add_one(int a, int b) {
  return requantize((pc.a_scale * float(a - pc.a_zp) + pc.b_scale * float(b - pc.b_zp)) * pc.inv_out_scale);
}

// Four elements: the bytes of one word of a and of b.
uint add_word(uint a, uint b) {
  ivec4 x = ts_i8_unpack4(a), y = ts_i8_unpack4(b);
  return ts_i8_pack4(ivec4(add_one(x.x, y.x), add_one(x.y, y.y), add_one(x.z, y.z), add_one(x.w, y.w)));
}

const bool kBuffers = a_is_buffer && b_is_buffer && out_is_buffer;

void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  if (kBuffers) {
    if (16u * t + 16u <= out_numel()) {
      uvec4 x = a_chunk(t), y = b_chunk(t);
      out_store_chunk(t, uvec4(add_word(x.x, y.x), add_word(x.y, y.y), add_word(x.z, y.z), add_word(x.w, y.w)));
      return;
    }
    for (uint w = 4u * t; w < 4u * t + 4u && w < out_texels(); ++w)
      out_store(w, ts_i8_unpack4(add_word(a_word(w), b_word(w))));
    return;
  }
  ivec4 v = ivec4(0);
  for (uint j = 0u; j < 4u; ++j) {
    uint i = out_flat(t, j);
    if (i == TS_PADDING) continue;
    v[j] = add_one(a_at(i), b_at(i));
  }
  out_store(t, v);
}
