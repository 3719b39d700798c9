#pragma once
// Compute pipelines of one device, made once per (program, workgroup size), by whichever thread asks
// first: a compile-ahead thread (warm) or the run's (get). The pipeline itself is kept, not just the
// driver's compiled code in a VkPipelineCache: a GPU driver takes a sizeable part of a second to
// create a cold pipeline, and a run that arrived while a compile-ahead thread was still creating it
// created it a second time, beside it (PERFORMANCE.md: the run thread's time spent waiting).
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/vulkan/context.h"
#include "gpu/vulkan/programs.h"

namespace ts::vk {

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  // What the driver says it compiled (VK_KHR_pipeline_executable_properties: "Register Count" = "64",
  // ...), in its order; empty unless the Pipelines capture them.
  std::vector<std::pair<std::string, std::string>> stats;
};

class Pipelines {
 public:
  // capture_stats: create pipelines with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR and keep
  // Pipeline::stats (the device must offer Features::exec_stats). roll_loops: modules go through
  // with_loops_rolled (roll_loops.h).
  Pipelines(const Device& device, bool capture_stats, bool roll_loops);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The workgroup size is specialization constant 0 (the preamble's local_size_x_id). Waits for a
  // creation in flight on another thread; throws its error (or, if that one failed, creates again,
  // so that every case of a broken kernel reports the error itself).
  const Pipeline& get(const Program& program, uint32_t workgroup_size);
  size_t size() const;
  // Creates the pipeline unless it exists or is being created. Thread-safe, like get(): compile-ahead
  // threads call it while the run's thread uses get(). Errors are left for get() to report.
  void warm(const Program& program, uint32_t workgroup_size);

 private:
  using Key = std::pair<uint64_t, uint32_t>;
  // The entry of `key`, created on this thread if there is none (`created` says so).
  std::shared_future<Pipeline> entry(const Program& program, uint32_t workgroup_size, bool& created);
  Pipeline create(const Program& program, uint32_t workgroup_size) const;
  std::vector<std::pair<std::string, std::string>> statistics(VkPipeline pipeline) const;
  void destroy(const Pipeline& p) const;

  const Device& dev_;
  const bool capture_stats_;
  const bool roll_loops_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_future<Pipeline>> pipelines_;  // a failed creation leaves no entry
};

}  // namespace ts::vk
