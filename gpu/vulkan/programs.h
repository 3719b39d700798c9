#pragma once
// Kernel text assembly and the in-memory SPIR-V cache: a kernel is compiled and reflected once per
// distinct text (preamble + dtype defines + plan defines + accessors + source), whatever the device.
// The accessors are generated from the layout and dtype of each tensor the kernel declares with
// TS_INPUT / TS_OUTPUT (gpu/vulkan/accessors.h), so the text, and with it the cache key, holds them;
// shapes never enter it (the accessors read them from ts_meta).
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/op.h"
#include "gpu/kernel_source.h"
#include "gpu/vulkan/accessors.h"
#include "gpu/vulkan/reflect.h"

namespace ts::vk {

struct Program {
  uint64_t id = 0;  // distinct per text: keys the per-device pipelines
  std::vector<uint32_t> spirv;
  Reflection reflection;
  std::vector<AccessorDecl> accessors;  // the kernel's TS_INPUT / TS_OUTPUT tensors
  std::string file;                     // what messages call the kernel (KernelText::file)
};

// What every kernel gets after the preamble for a case dtype: DTYPE, DTYPE4, IS_F16, TO_FLOAT,
// TO_VEC4, FROM_FLOAT, FROM_VEC4 as #defines. Unsupported for a dtype without kernels.
std::string dtype_defines(DType t);

class Programs {
 public:
  // The form in this case of the tensor a kernel declares (TS_INPUT / TS_OUTPUT) in `file`; throws
  // if the case has no such tensor.
  using FormOf = std::function<TensorForm(const AccessorDecl& decl, const std::string& file)>;
  // Throws std::runtime_error naming the kernel: unknown kernel, compile error, unbindable resources;
  // Unsupported for a dtype or tensor form without kernels.
  // Thread-safe: compile-ahead threads (VulkanBackend::precompile) call it beside the run's thread;
  // one text compiles once, whoever asks first, and the others wait for it. A compile error is not
  // cached, so every case of a broken kernel reports it.
  const Program& get(const Dispatch& d, DType dtype, const FormOf& form_of);

  const KernelSources* sources = nullptr;  // the backend's (GpuBackend::kernel_sources)
  bool f16_rte = false;  // the device has shaderRoundingModeRTEFloat16 (accessor_glsl's f16_rte)
  bool skew = false;     // skew.glsl after the defines (GpuBackend::set_barrier_skew)

  struct Counts {
    uint64_t compiles = 0;
    uint64_t cache_hits = 0;
  };
  Counts counts() const;

 private:
  mutable std::mutex mu_;
  Counts counts_;
  // Keyed by the full text: no collisions to reason about. A program being compiled is a future.
  std::unordered_map<std::string, std::shared_future<const Program*>> cache_;
  std::deque<Program> store_;  // what cache_ points to: deque elements never move
};

}  // namespace ts::vk
