#pragma once
// Kernel sources as the backends compile them. GLSL as glslang takes it and WGSL have no include
// mechanism; kernels that share code (an int8 requantization, a tile GEMM that two operators' kernels
// reuse) name it with a line `#include "file"`, resolved here, textually,
// before the backend parses accessors or compiles, for built-in and overridden sources alike
// (GpuBackend::set_kernel_source).
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// The text of include `name`, or nullopt when there is none.
using IncludeReader = std::function<std::optional<std::string>(const std::string& name)>;

// `source` with every line `#include "name"` (blanks allowed around it) replaced by the text of
// `dir` + name: as `read` returns it when given, else as embedded in the binary (gpu/embedded.h),
// with its own includes resolved the same way. A file included once is not included again (its
// later #include lines become empty), so two includes may both need a third. Every other line is
// kept as it is, so a source without includes comes back unchanged. Throws std::runtime_error naming
// `what` (the kernel) and the missing file.
std::string resolve_includes(std::string_view source, const std::string& dir, const std::string& what,
                             const IncludeReader& read = {});

// Where a kernel's text comes from, decided in one place for both backends: the source embedded in
// the binary (gpu/vulkan/shaders/<kernel>.comp, gpu/webgpu/shaders/<kernel>.wgsl), or a replacement
// set at run time (tests splice bugs in; `--kernels DIR` brings a user's file), its includes resolved
// as above. Each text carries the name compiler messages call it by, so an error in a user's kernel
// names the user's file. Thread-safe: compile-ahead threads read sources while the run's thread may
// replace one. Kernel languages: ".comp" (Vulkan GLSL) or ".wgsl" (WebGPU).
struct KernelText {
  std::string text;
  std::string file;      // "KERNEL.comp" for a built-in kernel, the path given for a replacement
  bool replaced = false;
};

class KernelSources {
 public:
  explicit KernelSources(std::string ext) : ext_(std::move(ext)) {}
  // `text` replaces `kernel` from now on; "" restores the built-in one. `file` names it in messages
  // (default: "<kernel><ext>").
  void set(const std::string& kernel, std::string text, std::string file = "");
  // The text of `kernel` (a copy, includes resolved); throws std::runtime_error naming it when there
  // is neither a replacement nor a built-in kernel of that name, or an include is missing.
  KernelText get(const std::string& kernel) const;
  // The name messages use for `kernel` ("KERNEL.comp" or a replacement's path).
  std::string file(const std::string& kernel) const;
  bool any_replaced() const;
  // Whether `kernel` has a text here: a replacement, or a built-in kernel of this language.
  bool has(const std::string& kernel) const;
  bool replaced(const std::string& kernel) const;
  // Whether the text of `kernel` (includes resolved) contains `word`; remembered until the kernel is
  // replaced, so a per-case question costs a lookup. False where get() would throw.
  bool mentions(const std::string& kernel, const std::string& word) const;

 private:
  struct Replacement {
    std::string text, file;
  };
  std::string ext_;
  mutable std::mutex mu_;
  std::map<std::string, Replacement> replaced_;
  mutable std::map<std::pair<std::string, std::string>, bool> mentions_;  // (kernel, word)
};

// The built-in kernels of a language (".comp" or ".wgsl"): the stems of the embedded shaders that are
// Dispatch kernels (not includes), sorted.
std::vector<std::string> builtin_kernels(std::string_view ext);
// Where the built-in kernels of a language live in the source tree (and in the embedded files).
std::string builtin_kernel_dir(std::string_view ext);

}  // namespace ts
