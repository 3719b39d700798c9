#include "gpu/vulkan/programs.h"

#include <stdexcept>

#include "core/embedded.h"
#include "gpu/gpu_backend.h"
#include "gpu/vulkan/compiler.h"

namespace ts::vk {

namespace {

// The dtype a kernel computes in: `DTYPE x[]` blocks follow the case dtype.
std::string dtype_defines(DType t) {
  auto defs = [](const char* scalar, const char* vec4, int f16) {
    return cat("#define DTYPE ", scalar, "\n#define DTYPE4 ", vec4, "\n#define IS_F16 ", f16, "\n");
  };
  switch (t) {
    case DType::f32: return defs("float", "vec4", 0);
    case DType::f16: return defs("float16_t", "f16vec4", 1);
    case DType::i8: return defs("int8_t", "i8vec4", 0);
    case DType::i32: return defs("int", "ivec4", 0);
    case DType::bf16:
    case DType::f64: break;
  }
  throw Unsupported(cat("vulkan: no kernels for case dtype ", dtype_name(t)));
}

}  // namespace

const Program& Programs::get(const Dispatch& d, DType dtype) {
  std::string_view preamble = embedded("gpu/vulkan/shaders/preamble.glsl");
  auto o = overrides_.find(d.kernel);
  std::string_view source = o != overrides_.end() ? std::string_view(o->second)
                                                  : embedded("gpu/vulkan/shaders/" + d.kernel + ".comp");
  std::string defines = dtype_defines(dtype);
  for (const std::string& def : d.defines) {
    size_t eq = def.find('=');
    defines += eq == std::string::npos ? cat("#define ", def, "\n")
                                       : cat("#define ", def.substr(0, eq), " ", def.substr(eq + 1), "\n");
  }
  std::string text = cat(preamble, defines, source);
  if (auto hit = cache_.find(text); hit != cache_.end()) {
    ++cache_hits;
    return hit->second;
  }
  // Separate parts so that compiler messages say "axpy.comp:3" rather than a line of the whole text.
  Program p;
  p.spirv = compile_compute({{"preamble.glsl", preamble}, {"defines", defines}, {d.kernel + ".comp", source}},
                            d.kernel);
  p.reflection = reflect(p.spirv, d.kernel);
  p.id = ++compiles;
  return cache_.emplace(std::move(text), std::move(p)).first->second;
}

}  // namespace ts::vk
