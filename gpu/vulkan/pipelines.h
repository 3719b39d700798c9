#pragma once
// Compute pipelines of one device, made once per (program, workgroup size) through a VkPipelineCache.
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "gpu/vulkan/context.h"
#include "gpu/vulkan/programs.h"

namespace ts::vk {

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Pipelines {
 public:
  explicit Pipelines(const Device& device);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The workgroup size is specialization constant 0 (the preamble's local_size_x_id).
  const Pipeline& get(const Program& program, uint32_t workgroup_size);
  size_t size() const { return pipelines_.size(); }
  // Compiles the pipeline into the VkPipelineCache and drops it, so that get() later is a cache hit.
  // Thread-safe (pipeline creation and an internally synchronized cache), unlike get(): compile-ahead
  // threads call it while the run's thread uses get().
  void warm(const Program& program, uint32_t workgroup_size);

 private:
  Pipeline create(const Program& program, uint32_t workgroup_size) const;
  void destroy(const Pipeline& p) const;

  const Device& dev_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<std::pair<uint64_t, uint32_t>, Pipeline> pipelines_;
  std::mutex warm_mu_;
  std::set<std::pair<uint64_t, uint32_t>> warmed_;
};

}  // namespace ts::vk
