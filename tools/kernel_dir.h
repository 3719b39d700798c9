#pragma once
// `--kernels DIR` (or TOUCHSTONE_KERNELS): the user's kernels, DIR/<kernel>.comp (Vulkan GLSL) and
// DIR/<kernel>.wgsl (WebGPU), each replacing the built-in kernel of that Dispatch::kernel stem at
// run time (GpuBackend::set_kernel_source). Read and checked before any backend opens.
#include <string>
#include <vector>

namespace ts {

struct KernelFile {
  std::string kernel;  // the Dispatch::kernel stem (`touchstone abi OP` shows an operator's)
  std::string ext;     // ".comp" or ".wgsl"
  std::string path;    // DIR/<kernel><ext>, as messages name it
  std::string text;
  // The backend that runs this language: vulkan (.comp) or webgpu (.wgsl).
  const char* backend() const { return ext == ".comp" ? "vulkan" : "webgpu"; }
};

struct KernelDir {
  std::string dir;                // "" = none given
  std::vector<KernelFile> files;  // sorted by file name
  // "DIR (<kernel>.comp, <kernel>.wgsl)"
  std::string describe() const;
};

// How many cases ran each of the user's files: a .comp on vulkan, a .wgsl on webgpu, whatever the
// case's outcome (a FAIL ran it too). A file that none ran was checked by nothing (on lavapipe, for
// one, every case of a tensor-core kernel is UNSUPPORTED), and a table of PASSes is not its verdict.
struct KernelUse {
  struct File {
    std::string path, kernel, backend;
    long long cases = 0;
  };
  std::vector<File> files;  // every file of the dir, in its order

  KernelUse() = default;
  explicit KernelUse(const KernelDir& d);
  // `ran`: CaseResult::kernels of a case on `backend`, the kernels its plan dispatched ("a + b").
  void count(const std::string& backend, const std::string& ran);
  // The counts in one line, and a WARNING (stdout and stderr) for each file that no case ran.
  void print() const;
};

// Reads every file of `dir`. UsageError (exit 2) when DIR is not a readable directory, holds no
// kernel, or holds an entry that is not `<built-in kernel>.comp` / `.wgsl` (naming it and listing
// the built-in kernels); files whose name starts with '.' (editors' swap files) are ignored.
KernelDir load_kernel_dir(const std::string& dir);

}  // namespace ts
