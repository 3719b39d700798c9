#pragma once
// WGSL accessors (gpu/ACCESSORS.md): a kernel declares each layout-capable tensor with one line,
//   TS_INPUT(xq, 0)   TS_OUTPUT(out_, 4)
// and the backend replaces that line with the tensor's resource declaration for this case's layout
// and dtype (a storage buffer of texels, a texture_3d read with textureLoad, or a
// texture_storage_3d), and prepends the accessor functions NAME_at, NAME_store, ... (NAME: the
// declared name less one trailing '_'). Everything that does not depend on the tensor (index math
// of the texel model, bfloat16 <-> float32, ts_meta) is written once, in accessor_library().
// The replacement keeps every line of the kernel where it was, so Dawn's line numbers still count
// from the kernel file's first line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout.h"
#include "core/tensor.h"

namespace ts::webgpu {

struct TensorDecl {
  std::string name;  // as written, e.g. "out_" (bound_tensor() maps it to a tensor)
  uint32_t binding = 0;
  bool output = false;
  size_t line = 0;  // 1-based, in the kernel file
};

// The TS_INPUT / TS_OUTPUT lines of a kernel, in order. Throws std::runtime_error naming the kernel
// and line of a malformed one, a name or binding used twice, or binding kMetaBinding (ts_meta's).
std::vector<TensorDecl> tensor_decls(std::string_view source, const std::string& kernel);

// How one declared tensor is held in this case.
struct TensorForm {
  Layout layout = Layout::buffer;
  DType dtype = DType::f32;
};

// The RGBA format of a texture3d tensor of `dtype`: rgba32float, rgba16float, rgba16uint (bfloat16
// as raw bits), bytes per texel in *texel_bytes. Throws std::invalid_argument for a dtype no image
// holds.
const char* texture_format(DType dtype, size_t* texel_bytes = nullptr);

// Throws std::invalid_argument when the accessors cannot hold `form` (int32 tensors, int8 in a
// texture layout, a float dtype in a packed int8 layout).
void check_form(const TensorForm& form, const std::string& tensor);

// The shared part: ts_meta at kMetaBinding, the texel model of core/layout.cpp, the bfloat16
// conversions. Once per kernel that declares a tensor; `f16`: the kernel enables f16 (float16 images'
// rounding needs it).
std::string accessor_library(bool f16);

struct Expansion {
  std::string functions;  // accessor functions of every declared tensor (goes before the kernel)
  std::string kernel;     // the kernel text, each declaration line replaced by one line of resource declarations
};
// forms[k] is how decls[k] is held.
Expansion expand(std::string_view source, const std::vector<TensorDecl>& decls, const std::vector<TensorForm>& forms);

// The accessor prefix of a declared name: one trailing '_' dropped ("out_" -> "out").
std::string accessor_prefix(const std::string& declared);

}  // namespace ts::webgpu
