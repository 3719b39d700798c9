// q8ta_add: out = clamp(round(q) + out_zp, -128, 127) with, element by element,
//   q = (a_scale * f32(a - a_zp) + b_scale * f32(b - b_zp)) * inv_out_scale     (float32)
// round() is WGSL's, ties to even; the zero point is added after rounding and the clamp is in float.
// inv_out_scale is 1 / output_scale rounded once to float32 on the host (gpu/plans/q8ta_add.cpp).
// a, b and out each in any int8 layout (gpu/ACCESSORS.md).
// General path: one invocation per texel (32-bit word) of out, all n of them, element by element
// through the accessors, padding lanes 0 (the accessor).
// Buffer fast path (a, b and out all buffers, known when compiling; the plan then gives one
// invocation per 16-byte chunk of out): invocation u takes words 4u .. 4u+3 of all three, so a
// warp's loads and stores are consecutive 16-byte chunks, in one load of a and b and one store of
// out when the chunk lies inside the tensor; the last, partial chunk goes word by word, its last
// partial word through out_store (which keeps the guard's bytes). Both paths compute each element
// with requantized(), so their results are bit-identical: the general path converts it to i32, the
// fast path takes its byte from its bits (add_byte).
TS_INPUT(a, 0)
TS_INPUT(b, 1)
TS_OUTPUT(out_, 2)
struct Params { a_scale: f32, b_scale: f32, inv_out_scale: f32, a_zp: i32, b_zp: i32, out_zp: i32, n: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

// r = clamp(round(q) + out_zp, -128, 127): an integer, exact in float32.
fn requantized(a: i32, b: i32) -> f32 {
  let q = (pc.a_scale * f32(a - pc.a_zp) + pc.b_scale * f32(b - pc.b_zp)) * pc.inv_out_scale;
  return clamp(round(q) + f32(pc.out_zp), -128.0, 127.0);
}

fn add_one(a: i32, b: i32) -> i32 { return i32(requantized(a, b)); }

// The byte of r without a conversion (WGSL's float-to-int conversion saturates, which Tint spells
// out as another clamp): r + 1.5 * 2^23 is exact (|r| <= 128, and the sum's unit is 1) and its bits
// are 0x4B400000 + r, so its low byte is r's two's-complement byte.
fn add_byte(a: i32, b: i32) -> u32 { return bitcast<u32>(requantized(a, b) + 12582912.0) & 0xFFu; }

// Four elements: the bytes of one word of a and of b.
fn add_word(a: u32, b: u32) -> u32 {
  let x = ts_i8_unpack4(a);
  let y = ts_i8_unpack4(b);
  return add_byte(x.x, y.x) | (add_byte(x.y, y.y) << 8u) | (add_byte(x.z, y.z) << 16u) | (add_byte(x.w, y.w) << 24u);
}

const kBuffers = a_is_buffer && b_is_buffer && out_is_buffer;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  if (kBuffers) {
    if (16u * t + 16u <= out_numel()) {
      let x = a_chunk(t);
      let y = b_chunk(t);
      out_store_chunk(t, vec4<u32>(add_word(x.x, y.x), add_word(x.y, y.y), add_word(x.z, y.z), add_word(x.w, y.w)));
      return;
    }
    for (var w = 4u * t; w < 4u * t + 4u && w < out_texels(); w++) {
      out_store(w, ts_i8_unpack4(add_word(a_word(w), b_word(w))));
    }
    return;
  }
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    v[j] = add_one(a_at(i), b_at(i));
  }
  out_store(t, v);
}
