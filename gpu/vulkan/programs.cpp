#include "gpu/vulkan/programs.h"

#include <stdexcept>

#include "core/profile.h"
#include "gpu/embedded.h"
#include "gpu/gpu_backend.h"
#include "gpu/kernel_source.h"
#include "gpu/vulkan/compiler.h"

namespace ts::vk {

// The case dtype of plain `DTYPE x[]` / `DTYPE4 x[]` arrays (tensors that are always buffers, such
// as KV caches): TO_FLOAT / TO_VEC4 widen an element / a vec4 of them to float32, FROM_FLOAT /
// FROM_VEC4 round back (bfloat16 through the preamble's conversion; its words are 16-bit integers);
// DTYPE_BYTES is an element's size, for kernels that read 16-bit arrays as wider words.
std::string dtype_defines(DType t) {
  auto defs = [t](const char* scalar, const char* vec4, int f16, const char* to, const char* to4, const char* from,
                 const char* from4) {
    return cat("#define DTYPE ", scalar, "\n#define DTYPE4 ", vec4, "\n#define IS_F16 ", f16, "\n#define DTYPE_BYTES ",
               dtype_size(t), "\n#define TO_FLOAT(x) ", to,
               "\n#define TO_VEC4(x) ", to4, "\n#define FROM_FLOAT(x) ", from, "\n#define FROM_VEC4(x) ", from4, "\n");
  };
  switch (t) {
    case DType::f32: return defs("float", "vec4", 0, "float(x)", "vec4(x)", "float(x)", "vec4(x)");
    case DType::f16: return defs("float16_t", "f16vec4", 1, "float(x)", "vec4(x)", "float16_t(x)", "f16vec4(x)");
    case DType::bf16:
      return defs("uint16_t", "u16vec4", 0, "ts_bf16_to_float(uint(x))", "ts_bf16_to_vec4(uvec4(x))",
                  "uint16_t(ts_float_to_bf16(x))", "u16vec4(ts_vec4_to_bf16(x))");
    case DType::i8: return defs("int8_t", "i8vec4", 0, "float(x)", "vec4(x)", "int8_t(x)", "i8vec4(x)");
    case DType::i32: return defs("int", "ivec4", 0, "float(x)", "vec4(x)", "int(x)", "ivec4(x)");
    case DType::f64: break;
  }
  throw Unsupported("", cat("vulkan: no kernels for case dtype ", dtype_name(t)));
}

const Program& Programs::get(const Dispatch& d, DType dtype, const FormOf& form_of) {
  std::string_view preamble = embedded("gpu/vulkan/shaders/preamble.glsl");
  const KernelText kernel = sources->get(d.kernel);
  std::string source;
  std::vector<AccessorDecl> decls = parse_accessors(kernel.text, kernel.file, &source);
  std::vector<TensorForm> forms;
  for (const AccessorDecl& a : decls) forms.push_back(form_of(a, kernel.file));
  const std::string accessors = accessor_glsl(decls, forms, f16_rte && !d.fallback_paths);
  std::string defines = dtype_defines(dtype);
  for (const std::string& def : d.defines) {
    size_t eq = def.find('=');
    defines += eq == std::string::npos ? cat("#define ", def, "\n")
                                       : cat("#define ", def.substr(0, eq), " ", def.substr(eq + 1), "\n");
  }
  if (skew) defines += embedded("gpu/vulkan/shaders/skew.glsl");
  // The file name too: messages of the same text from another file name that file.
  std::string text = cat(kernel.file, "\n", preamble, defines, accessors, source);
  std::promise<const Program*> mine;
  {
    std::unique_lock lock(mu_);
    if (auto hit = cache_.find(text); hit != cache_.end()) {
      ++counts_.cache_hits;
      std::shared_future<const Program*> f = hit->second;
      lock.unlock();
      return *f.get();  // rethrows the compile error of the thread that compiled it
    }
    cache_.emplace(text, mine.get_future().share());
  }
  try {
    // Separate parts so that compiler messages say "axpy.comp:3" (or the replacement's path) rather
    // than a line of the whole text.
    Program p;
    Phase ph("vulkan: glslang compile, reflect");
    p.spirv = compile_compute(
        {{"preamble.glsl", preamble}, {"defines", defines}, {"accessors", accessors}, {kernel.file, source}}, kernel.file);
    p.reflection = reflect(p.spirv, d.kernel);
    p.accessors = std::move(decls);
    p.file = kernel.file;
    std::lock_guard lock(mu_);
    p.id = ++counts_.compiles;
    const Program* stored = &store_.emplace_back(std::move(p));
    mine.set_value(stored);
    return *stored;
  } catch (...) {
    mine.set_exception(std::current_exception());
    std::lock_guard lock(mu_);
    cache_.erase(text);
    throw;
  }
}

Programs::Counts Programs::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace ts::vk
