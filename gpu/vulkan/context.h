#pragma once
// The Vulkan instance (with the validation messenger), the physical devices it sees, and one
// logical device with a compute queue.
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu/vulkan/vk_check.h"

namespace ts::vk {

class Instance {
 public:
  // Throws std::runtime_error with the reason: no loader, no driver, validation layer missing.
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  // Validation messages (WARNING and above) in arrival order; the owner drains them.
  std::vector<std::string>& messages() { return *messages_; }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  // Kept from this instance: volk's global pointer follows the latest instance loaded, which may
  // not have VK_EXT_debug_utils enabled (the loader then hands out null).
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;
  // Heap-held so the address given to the layer as user data never moves.
  std::unique_ptr<std::vector<std::string>> messages_ = std::make_unique<std::vector<std::string>>();
};

// Optional device features kernels may use; the device enables every one it has.
struct Features {
  bool storage16 = false;  // storageBuffer16BitAccess
  bool storage8 = false;   // storageBuffer8BitAccess
  bool float16 = false;    // shaderFloat16
  bool int8 = false;       // shaderInt8
  bool int16 = false;      // shaderInt16
  bool int_dot = false;    // shaderIntegerDotProduct (Vulkan 1.3)
  bool rte16 = false;      // shaderRoundingModeRTEFloat16 (a property, Vulkan 1.2)
  bool float64 = false;    // shaderFloat64
  bool int64 = false;      // shaderInt64
  bool memory_model = false;  // vulkanMemoryModel (Vulkan 1.2): the cooperative-matrix kernels' SPIR-V declares it
  VkSubgroupFeatureFlags subgroup_ops = 0;  // in compute shaders
  // VK_KHR_pipeline_executable_properties' pipelineExecutableInfo: the driver reports what it
  // compiled (registers, spills, sizes), which bench shows beside the times.
  bool exec_stats = false;
  // VK_NV_cooperative_matrix (glslang 12 compiles GL_NV_cooperative_matrix, not the KHR form): the
  // feature, and the shapes the driver lists ("16x16x16:f16*f16+f32=f32": M x N x K, A*B+C=D types).
  bool coopmat_nv = false;
  std::vector<std::string> coopmat_shapes;
  // Present when the device offers them: what `list` shows, so a device without the NV form says so.
  bool coopmat_khr_ext = false;
};

// The cooperative-matrix shapes the Touchstone kernels use (gpu/vulkan/shaders/*_coopmat.comp):
// a device that lists cooperative matrices but not these is treated as having none.
extern const char* const kCoopmatShapes[2];

// A physical device and everything the backend needs to know about it.
struct Adapter {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  std::string driver;  // driverName + driverInfo
  uint32_t subgroup_size = 0;
  uint64_t max_allocation = 0;  // maxMemoryAllocationSize
  uint32_t queue_family = UINT32_MAX;  // first family with compute, UINT32_MAX if none
  uint32_t timestamp_bits = 0;         // that family's timestampValidBits (0: no timestamps)
  Features features;

  std::string describe() const;  // "llvmpipe (LLVM 15.0.6, 256 bits) [cpu, Vulkan 1.4.305]"
  // Why a kernel declaring this SPIR-V capability cannot run here, or "" if it can: the capability
  // is on the backend's allowlist and the device has what it needs. The reason names the capability
  // ("needs SPIR-V capability Float16 (shaderFloat16), which <device> lacks"). `word`, when it
  // cannot: the DeviceInfo::capabilities word the device lacks ("" off the allowlist).
  std::string missing_for(uint32_t spirv_capability, std::string* word = nullptr) const;
};

// "ShaderClockKHR" for 5055; "capability N" for a number SPIR-V does not define.
std::string capability_name(uint32_t spirv_capability);

// Every physical device; throws std::runtime_error if there is none.
std::vector<Adapter> adapters(const Instance& instance);
// "0: llvmpipe (LLVM 15.0.6, 256 bits) [cpu, Vulkan 1.4.305]", in loader order.
std::vector<std::string> numbered(const std::vector<Adapter>& all);

// selector: "" = first discrete/integrated GPU, else a CPU device, else any usable one; a decimal
// index; or a case-insensitive substring of the name. Throws std::runtime_error listing the devices.
Adapter select_adapter(const Instance& instance, const std::string& selector);

// What one case in flight records into and waits on: a command buffer, its fence and a descriptor
// pool, reset per case (creating them per case costs more than a small case's run on NVIDIA).
struct CaseContext {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;  // reset with the pool
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  uint32_t sets = 0, buffers = 0, images = 0;  // what `descriptors` holds
};

// The logical device, its one compute queue, and the case contexts: one per case in flight, so
// that several threads may run cases at once (VulkanBackend::concurrency). A case that does not
// finish has its whole device abandoned (VulkanBackend's State).
class Device {
 public:
  explicit Device(Adapter adapter);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // A context no other case holds (made on first need), until release().
  CaseContext& acquire();
  void release(CaseContext& c);
  // The context's descriptor pool, emptied, with room for `sets` sets holding `buffers` storage
  // buffers and `images` storage images in all.
  VkDescriptorPool descriptor_pool(CaseContext& c, uint32_t sets, uint32_t buffers, uint32_t images);
  // vkQueueSubmit of one command buffer, under the queue's lock (queues are externally synchronized).
  // `seq` receives the submission's place in the queue's order.
  VkResult submit(VkCommandBuffer cmd, VkFence fence, uint64_t& seq);
  // Whether a submission earlier than `seq` is still in flight (not yet done()): a case waiting on
  // its fence may be held up by another's kernel, which the same queue runs first.
  bool earlier_in_flight(uint64_t seq) const;
  void done(uint64_t seq);

  const Adapter adapter;
  VolkDeviceTable fn{};  // per-device pointers: several devices may live at once (a lost one, a new one)
  VkDevice handle = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  // Set when a case's kernel did not finish and this device was abandoned: the cases queued behind
  // it on other threads run again on a new device rather than being blamed.
  std::atomic<bool> abandoned{false};

 private:
  void destroy();
  void destroy(CaseContext& c) const;

  mutable std::mutex mu_;  // the queue, the contexts, the in-flight list
  std::vector<std::unique_ptr<CaseContext>> contexts_;
  std::vector<CaseContext*> idle_;
  uint64_t next_seq_ = 0;
  std::set<uint64_t> in_flight_;
};

}  // namespace ts::vk
