#pragma once
// The Vulkan backend: GLSL kernels compiled at run time with glslang, bound by reflection (storage
// blocks by their array's name, push constants by member name), run on one device through volk.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"

namespace ts {

struct VulkanOptions {
  // "" = the first discrete/integrated GPU, else a CPU device (lavapipe); or a decimal index into
  // list_devices(); or a case-insensitive substring of the device name.
  std::string device;
  bool validation = false;      // VK_LAYER_KHRONOS_validation; a message during a run makes it an ERROR
  uint32_t timeout_ms = 10000;  // per submission: a kernel running longer is an ERROR, never a hang
  // Added to timeout_ms for a submission holding a pipeline's first dispatch on a device that
  // compiles there (lavapipe); exceeding it is reported as such, apart from a slow kernel.
  uint32_t compile_timeout_ms = 300000;
  // int8 kernels use the packed dot product where the device has it (false: their scalar path, to
  // check one against the other).
  bool int_dot = true;
  // Pipelines are created with their statistics captured where the device offers them
  // (Features::exec_stats), for bench to report; check never reads them, so it does not ask.
  bool kernel_stats = false;
  // Cases that may run at once on the device (concurrency()); 0: 1 on a CPU device or with
  // validation, else a quarter of the cores, at most 4.
  uint32_t lanes = 0;
};

class VulkanBackend : public GpuBackend {
 public:
  // nullptr and *why_not (if given) when Vulkan is unusable: no loader, no device, no device
  // matching the selector (the devices found are listed), validation layer missing.
  static std::unique_ptr<VulkanBackend> create(const VulkanOptions& options, std::string* why_not);
  // "0: llvmpipe (LLVM 15.0.6, 256 bits) [cpu, Vulkan 1.4.305]", one per device; empty and
  // *why_not (if given) when there is none.
  static std::vector<std::string> list_devices(std::string* why_not);
  // The name of the device `selector` picks (VulkanOptions::device, not ""): what Dawn's Vulkan
  // adapters are named, so WebGPU can select the same device. "" and *why_not when none matches, or
  // when devices sharing the name make the pick impossible to tell apart by name.
  static std::string device_name(const std::string& selector, std::string* why_not);
  // The position of that device among vkEnumeratePhysicalDevices' (what GGML_VK_VISIBLE_DEVICES
  // counts), so that a foreign Vulkan library runs on the device this backend picks; -1 on failure.
  static int device_index(const std::string& selector, std::string* why_not);
  ~VulkanBackend() override;

  DeviceInfo info() const override;
  std::string_view kind() const override { return "vulkan"; }
  unsigned concurrency() const override;
  bool set_barrier_skew(bool on) override;

  // Validation messages not yet reported (those during a run go into its error instead).
  std::vector<std::string> take_validation_messages();

  struct ShaderStats {
    uint64_t compiles = 0;    // glslang runs (distinct kernel texts)
    uint64_t cache_hits = 0;  // dispatches served from the SPIR-V cache
    size_t pipelines = 0;     // pipelines of the current device
  };
  ShaderStats shader_stats() const;

 protected:
  const DeviceLimits& limits() const override;
  void execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype) override;
  PlanTiming time_plan(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                                const TimingBudget& budget) override;
  void precompile(const std::vector<Dispatch>& plan, const std::map<std::string, Physical>& forms,
                  const std::map<std::string, DType>& dtypes, DType dtype) override;

 private:
  struct State;
  explicit VulkanBackend(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace ts
