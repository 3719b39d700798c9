#pragma once
// Where a kernel's text comes from, decided in one place for both backends: the source embedded in
// the binary (gpu/vulkan/shaders/<kernel>.comp, gpu/webgpu/shaders/<kernel>.wgsl), or a replacement
// set at run time (tests splice bugs in; `--kernels DIR` brings a user's file). Each text carries the
// name compiler messages call it by, so an error in a user's kernel names the user's file.
// Thread-safe: compile-ahead threads read sources while the run's thread may replace one.
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// The kernel languages: ".comp" (Vulkan GLSL) or ".wgsl" (WebGPU).
struct KernelText {
  std::string text;
  std::string file;      // "rope_half.comp" for a built-in kernel, the path given for a replacement
  bool replaced = false;
};

class KernelSources {
 public:
  explicit KernelSources(std::string ext) : ext_(std::move(ext)) {}
  // `text` replaces `kernel` from now on; "" restores the built-in one. `file` names it in messages
  // (default: "<kernel><ext>").
  void set(const std::string& kernel, std::string text, std::string file = "");
  // The text of `kernel` (a copy); throws std::runtime_error naming it when there is neither a
  // replacement nor a built-in kernel of that name.
  KernelText get(const std::string& kernel) const;
  // The name messages use for `kernel` ("rope_half.comp" or a replacement's path).
  std::string file(const std::string& kernel) const;
  bool any_replaced() const;
  bool replaced(const std::string& kernel) const;

 private:
  struct Replacement {
    std::string text, file;
  };
  std::string ext_;
  mutable std::mutex mu_;
  std::map<std::string, Replacement> replaced_;
};

// The built-in kernels of a language (".comp" or ".wgsl"): the stems of the embedded shaders, sorted.
std::vector<std::string> builtin_kernels(std::string_view ext);
// Where the built-in kernels of a language live in the source tree (and in the embedded files).
std::string builtin_kernel_dir(std::string_view ext);

}  // namespace ts
