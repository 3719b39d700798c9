#version 450
// Prepended to every kernel, followed by the DTYPE / DTYPE4 / IS_F16 defines, the plan's defines and
// the accessors generated for the kernel's TS_INPUT / TS_OUTPUT tensors (gpu/vulkan/accessors.cpp).
// The type extensions are always enabled: glslang declares a SPIR-V capability only for types a
// kernel actually uses, so a float32 kernel stays valid on a device without 8/16-bit support, and
// the backend reports a kernel needing a missing capability as UNSUPPORTED.
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_8bit_storage : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : enable
// spirv_instruction: the int8 kernels' packed dot product (OpSDot), declared under TS_INT_DOT only.
#extension GL_EXT_spirv_intrinsics : enable
// subgroupShuffleXor: kernels that ask for subgroups (Dispatch::subgroup) only.
#extension GL_KHR_shader_subgroup_shuffle : enable

// The workgroup size is specialization constant 0, chosen by the backend per device.
layout(local_size_x_id = 0) in;

// The invocation's index in the dispatch's 1-D grid. Grids over the per-dimension workgroup limit
// are folded into y and z by the backend; this unfolds them (invocations past the end of the 1-D
// grid exist in the last row: kernels bound-check the id as usual).
uint ts_linear_id() {
  return gl_GlobalInvocationID.x +
         gl_NumWorkGroups.x * gl_WorkGroupSize.x * (gl_GlobalInvocationID.y + gl_NumWorkGroups.y * gl_GlobalInvocationID.z);
}

// ---- bfloat16: 16-bit words holding the top half of a float32 ----
// Widening is exact. Narrowing rounds to nearest, ties to even, in integer arithmetic (no device
// float conversion involved); overflow rounds to infinity, and a NaN stays a NaN (its payload's top
// bits kept, quiet bit set), as core/half.cpp does on the host.
float ts_bf16_to_float(uint b) { return uintBitsToFloat(b << 16); }
vec4 ts_bf16_to_vec4(uvec4 b) { return uintBitsToFloat(b << 16); }
uint ts_float_to_bf16(float v) {
  uint u = floatBitsToUint(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}
uvec4 ts_vec4_to_bf16(vec4 v) {
  return uvec4(ts_float_to_bf16(v.x), ts_float_to_bf16(v.y), ts_float_to_bf16(v.z), ts_float_to_bf16(v.w));
}

// ---- float16 stores: the value rounded to float16, nearest even, computed in integer arithmetic ----
// An image's own float32 -> float16 conversion may round either way (llvmpipe truncates), and
// compilers fold a float16 round trip such as vec4(f16vec4(v)) back to v. Storing this value, which
// float16 holds exactly, gives the same bits in every layout on every device. Overflow rounds to
// infinity; NaN and infinity pass unchanged.
float ts_f16_round(float v) {
  uint u = floatBitsToUint(v), sign = u & 0x80000000u, a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return v;
  if (a >= 0x477FF000u) return uintBitsToFloat(sign | 0x7F800000u);  // 65520 and up: past float16's max
  if (a >= 0x38800000u) return uintBitsToFloat(sign | ((a + 0x0FFFu + ((a >> 13) & 1u)) & 0xFFFFE000u));
  // Below 2^-14: a multiple of float16's subnormal step 2^-24, from the 24-bit significand.
  uint e = a >> 23;
  if (e < 102u) return uintBitsToFloat(sign);  // below 2^-25: rounds to zero
  uint sig = (a & 0x7FFFFFu) | 0x800000u, drop = 126u - e;
  uint q = (sig + (1u << (drop - 1u)) - 1u + ((sig >> drop) & 1u)) >> drop;
  return uintBitsToFloat(sign | floatBitsToUint(float(q) * 5.9604644775390625e-8));
}
vec4 ts_f16_round4(vec4 v) { return vec4(ts_f16_round(v.x), ts_f16_round(v.y), ts_f16_round(v.z), ts_f16_round(v.w)); }
// For a float16 buffer store in a kernel declared RoundingModeRTE for 16-bit (the accessors do so on a
// device with shaderRoundingModeRTEFloat16): the conversion of a value with a normal float16 result
// is then nearest-even by the SPIR-V spec and costs nothing. What the spec leaves to the device
// (subnormal results: denormals may flush without DenormPreserve; overflow; NaN) takes ts_f16_round,
// whose result the conversion holds exactly: the same bits as ts_f16_round4 alone, for every value.
// The guard is min/max of |v| (a texel with a zero takes ts_f16_round4: rare, and the same bits); a
// NaN lane that min/max let through is converted as ts_f16_round4 would pass it on, unchanged.
// One guard per texel, not per lane: the per-lane guard was measurably slower (PERFORMANCE.md).
vec4 ts_f16_rte4(vec4 v) {
  vec4 a = abs(v);
  bool plain = max(max(a.x, a.y), max(a.z, a.w)) <= 65504.0 && min(min(a.x, a.y), min(a.z, a.w)) >= 6.103515625e-05;
  return plain ? v : ts_f16_round4(v);
}

// ---- The texel model of gpu/ACCESSORS.md, exactly core/layout.cpp's Physical::flat / locate ----
// A tensor is viewed as [N,C,H,W]; d = (W, H, C, N) from ts_meta. Its elements are grouped into
// texels of 4 lanes along the packed dimension; lanes past that dimension's end are padding. Layout
// numbers are core/layout.h's enum Layout. int8_4w numbers its 32-bit words as texture3d_w does its
// texels, int8_4c1w as texture3d_c; int8_4w4c's 16-byte block (n, c/4, h, w/4) holds 4 words, word j
// the 4 channels at w = 4*(w/4) + j.
const uint TS_BUFFER = 0u;
const uint TS_TEXTURE3D_W = 1u;
const uint TS_TEXTURE3D_H = 2u;
const uint TS_TEXTURE3D_C = 3u;
const uint TS_INT8_4W = 4u;
const uint TS_INT8_4C1W = 5u;
const uint TS_INT8_4W4C = 6u;
const uint TS_PADDING = 0xFFFFFFFFu;  // the flat index of a padding lane

uint ts_ceil4(uint x) { return (x + 3u) >> 2; }
uint ts_numel(uvec4 d) { return d.x * d.y * d.z * d.w; }

// The texture layout numbering a packed int8 layout's words the same way (int8_4w4c: itself).
uint ts_as_image(uint l) {
  if (l == TS_INT8_4W) return TS_TEXTURE3D_W;
  if (l == TS_INT8_4C1W) return TS_TEXTURE3D_C;
  return l;
}

// Image extents (X, Y, Z) in texels; a buffer's texels as (texels, 1, 1).
uvec3 ts_extent(uint l, uvec4 d) {
  l = ts_as_image(l);
  if (l == TS_TEXTURE3D_W) return uvec3(ts_ceil4(d.x), d.y, d.z * d.w);
  if (l == TS_TEXTURE3D_H) return uvec3(d.x, ts_ceil4(d.y), d.z * d.w);
  if (l == TS_TEXTURE3D_C) return uvec3(d.x, d.y, ts_ceil4(d.z) * d.w);
  if (l == TS_INT8_4W4C) return uvec3(4u * ts_ceil4(d.x) * d.y * ts_ceil4(d.z) * d.w, 1u, 1u);
  return uvec3(ts_ceil4(ts_numel(d)), 1u, 1u);
}

uint ts_texels(uint l, uvec4 d) {
  uvec3 e = ts_extent(l, d);
  return e.x * e.y * e.z;
}

// Texel t's position in the image: t = (z*Y + y)*X + x.
uvec3 ts_coord(uint l, uvec4 d, uint t) {
  uvec3 e = ts_extent(l, d);
  return uvec3(t % e.x, (t / e.x) % e.y, t / e.x / e.y);
}

// int8_4w4c word t: (w, h, first channel c0 = 4*(c/4), n).
uvec4 ts_4w4c_word(uvec4 d, uint t) {
  uint W4 = ts_ceil4(d.x), C4 = ts_ceil4(d.z), block = t >> 2;
  return uvec4(4u * (block % W4) + (t & 3u), (block / W4) % d.y, 4u * ((block / W4 / d.y) % C4), block / W4 / d.y / C4);
}

// How many lanes of texel t hold elements: lanes [0, k) do, the rest are padding.
uint ts_lanes(uint l, uvec4 d, uint t) {
  l = ts_as_image(l);
  if (l == TS_BUFFER) {
    uint n = ts_numel(d);
    return n > 4u * t ? min(n - 4u * t, 4u) : 0u;
  }
  if (l == TS_INT8_4W4C) {
    uvec4 p = ts_4w4c_word(d, t);
    return p.x < d.x ? min(d.z - p.z, 4u) : 0u;
  }
  uvec3 p = ts_coord(l, d, t);
  if (l == TS_TEXTURE3D_W) return min(d.x - 4u * p.x, 4u);
  if (l == TS_TEXTURE3D_H) return min(d.y - 4u * p.y, 4u);
  return min(d.z - 4u * (p.z % ts_ceil4(d.z)), 4u);
}

// Flat logical index of lane j of texel t, or TS_PADDING.
uint ts_flat(uint l, uvec4 d, uint t, uint j) {
  l = ts_as_image(l);
  if (l == TS_BUFFER) {
    uint i = 4u * t + j;
    return i < ts_numel(d) ? i : TS_PADDING;
  }
  uint w, h, c, n;
  if (l == TS_INT8_4W4C) {
    uvec4 p = ts_4w4c_word(d, t);
    w = p.x, h = p.y, c = p.z + j, n = p.w;
    if (w >= d.x || c >= d.z) return TS_PADDING;
    return ((n * d.z + c) * d.y + h) * d.x + w;
  }
  uvec3 p = ts_coord(l, d, t);
  w = p.x, h = p.y;
  if (l == TS_TEXTURE3D_W) {
    w = 4u * p.x + j, c = p.z % d.z, n = p.z / d.z;
    if (w >= d.x) return TS_PADDING;
  } else if (l == TS_TEXTURE3D_H) {
    h = 4u * p.y + j, c = p.z % d.z, n = p.z / d.z;
    if (h >= d.y) return TS_PADDING;
  } else {
    uint c4 = ts_ceil4(d.z);
    c = 4u * (p.z % c4) + j, n = p.z / c4;
    if (c >= d.z) return TS_PADDING;
  }
  return ((n * d.z + c) * d.y + h) * d.x + w;
}

// The image position (xyz) and lane (w) of flat index i, for a texture layout.
uvec4 ts_image_locate(uint l, uvec4 d, uint i) {
  l = ts_as_image(l);
  uint w = i % d.x, h = (i / d.x) % d.y, nc = i / d.x / d.y;  // nc = n*C + c
  if (l == TS_TEXTURE3D_W) return uvec4(w >> 2, h, nc, w & 3u);
  if (l == TS_TEXTURE3D_H) return uvec4(w, h >> 2, nc, h & 3u);
  uint c = nc % d.z, n = nc / d.z;
  return uvec4(w, h, n * ts_ceil4(d.z) + (c >> 2), c & 3u);
}

// The texel (x) and lane (y) holding flat index i.
uvec2 ts_locate(uint l, uvec4 d, uint i) {
  l = ts_as_image(l);
  if (l == TS_BUFFER) return uvec2(i >> 2, i & 3u);
  if (l == TS_INT8_4W4C) {
    uint w = i % d.x, h = (i / d.x) % d.y, c = (i / d.x / d.y) % d.z, n = i / d.x / d.y / d.z;
    return uvec2((((n * ts_ceil4(d.z) + (c >> 2)) * d.y + h) * ts_ceil4(d.x) + (w >> 2)) * 4u + (w & 3u), c & 3u);
  }
  uvec4 p = ts_image_locate(l, d, i);
  uvec3 e = ts_extent(l, d);
  return uvec2((p.z * e.y + p.y) * e.x + p.x, p.w);
}


// ---- int8 words (gpu/ACCESSORS.md): 4 bytes of a 32-bit word, byte j lane j ----
// Each lane's low byte packed; a byte sign-extended back to int. No 8-bit types: an int8 tensor is
// an array of 32-bit words, loaded 4 or 16 bytes at a time.
uint ts_i8_pack4(ivec4 v) {
  uvec4 b = uvec4(v) & 0xFFu;
  return b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
}
ivec4 ts_i8_unpack4(uint w) { return ivec4(uvec4(w) << uvec4(24u, 16u, 8u, 0u)) >> 24; }
int ts_i8_byte(uint w, uint lane) { return bitfieldExtract(int(w), int(8u * lane), 8); }
