#pragma once
// The layout accessors of gpu/ACCESSORS.md, in GLSL. A kernel declares each layout-capable tensor
// with one line, `TS_INPUT(name, binding)` or `TS_OUTPUT(name, binding)`; the backend blanks that
// line and generates, for the tensor's layout and dtype in the case at hand, its resource and the
// functions NAME_numel, NAME_dims, NAME_at, NAME_at4, NAME_texel (inputs), NAME_texels, NAME_flat,
// NAME_texel_of, NAME_store, NAME_store_texel (outputs), and the constant NAME_is_buffer. Float
// tensors (float32, float16, bfloat16) in buffer and texture3d_w/h/c read float / vec4 and store
// vec4. int8 tensors in buffer and int8_4w / int8_4c1w / int8_4w4c are arrays of 32-bit words held
// as 16-byte chunks (uvec4; no 8-bit types, so every load is a whole word or chunk whatever the
// driver makes of 8-bit storage); they read int / ivec4 / NAME_packed4 and store ivec4 (each lane's low byte: the
// kernel clamps), and also move raw words and chunks (NAME_word, NAME_chunk, NAME_store_word,
// NAME_store_chunk) for a kernel's buffer fast path. The index math and the bfloat16 and int8
// conversions they call live once in shaders/preamble.glsl; what is generated only picks the
// resource and the dtype's conversions.
//
// What is compiled in per tensor is its storage kind (a buffer, a 3-D image of the dtype's format,
// or packed int8 words) and its dtype: a buffer's accessors index it directly, and NAME_is_buffer
// lets a kernel branch to a path with no index arithmetic at no cost. Which of the three texture
// packings an image holds (or which packed int8 layout an int8 tensor has) is read from ts_meta at
// run time, as its shape is. One program thus serves texture3d_w, _h and _c (and the three packed
// int8 layouts): a new program costs a glslang compile and a pipeline compile, and
// a sweep that draws a layout per tensor would otherwise compile nearly every case anew (4^6 layout
// combinations for rope_llama's 6 tensors, 2^6 storage kinds). The branch on the packing is uniform
// across a dispatch.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout.h"
#include "core/tensor.h"

namespace ts::vk {


struct AccessorDecl {
  std::string name;  // as written: the functions' prefix, and (less one trailing '_') the tensor bound
  uint32_t binding = 0;
  bool output = false;  // TS_OUTPUT
  size_t line = 0;      // 1-based, in the kernel file
};

// The kernel's declarations, in source order. `stripped` receives the source with each declaration
// line emptied (not removed: compiler messages keep the kernel's own line numbers). A declaration is
// a line whose first word is TS_INPUT( or TS_OUTPUT(. Throws std::runtime_error naming the kernel and
// the line for a malformed declaration, a name declared twice, two declarations at one binding, or a
// binding at or past kMetaBinding (where ts_meta binds).
std::vector<AccessorDecl> parse_accessors(std::string_view source, const std::string& kernel, std::string* stripped);

// The form a declared tensor takes in this case.
struct TensorForm {
  Layout layout = Layout::buffer;
  DType dtype = DType::f32;
};

// GLSL for the declared tensors (forms[i] is decls[i]'s): the ts_meta buffer, then per tensor its
// resource (ts_buf_NAME / ts_img_NAME) and functions; "" when there are none. Throws Unsupported
// for a form that has no accessors. Forms that differ only in their texture packing, or in which
// packed int8 layout, give one text (programs are keyed by the text: gpu/vulkan/programs.h).
// f16_rte: the device has shaderRoundingModeRTEFloat16; float16 buffer stores then use its
// conversion under RoundingModeRTE (gpu/ACCESSORS.md "float16 stores").
std::string accessor_glsl(const std::vector<AccessorDecl>& decls, const std::vector<TensorForm>& forms,
                          bool f16_rte = false);

}  // namespace ts::vk
