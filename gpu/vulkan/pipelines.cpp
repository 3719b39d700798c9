#include "gpu/vulkan/pipelines.h"

#include "gpu/vulkan/roll_loops.h"

#include "core/contract.h"
#include "core/profile.h"

namespace ts::vk {

Pipelines::Pipelines(const Device& device, bool capture_stats, bool roll_loops)
    : dev_(device), capture_stats_(capture_stats), roll_loops_(roll_loops) {}

// Compile-ahead threads are drained before a device goes (VulkanBackend::State), so every entry left
// is a made pipeline.
Pipelines::~Pipelines() {
  for (auto& [key, p] : pipelines_) destroy(p.get());
}

void Pipelines::destroy(const Pipeline& p) const {
  dev_.fn.vkDestroyPipeline(dev_.handle, p.pipeline, nullptr);
  dev_.fn.vkDestroyPipelineLayout(dev_.handle, p.layout, nullptr);
  dev_.fn.vkDestroyDescriptorSetLayout(dev_.handle, p.set_layout, nullptr);
}

size_t Pipelines::size() const {
  std::lock_guard lock(mu_);
  return pipelines_.size();
}

std::shared_future<Pipeline> Pipelines::entry(const Program& program, uint32_t workgroup_size, bool& created) {
  const Key key{program.id, workgroup_size};
  std::promise<Pipeline> promise;
  std::shared_future<Pipeline> made = promise.get_future().share();
  {
    std::lock_guard lock(mu_);
    created = false;
    if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
    created = true;
    pipelines_.emplace(key, made);
  }
  try {
    promise.set_value(create(program, workgroup_size));
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mu_);
    pipelines_.erase(key);
  }
  return made;
}

const Pipeline& Pipelines::get(const Program& program, uint32_t workgroup_size) {
  bool created = false;
  std::shared_future<Pipeline> made = entry(program, workgroup_size, created);
  if (!created) {
    try {
      made.get();
    } catch (...) {
      // A compile-ahead thread's creation failed (and left no entry): create here, where the error
      // becomes this case's outcome.
      made = entry(program, workgroup_size, created);
    }
  }
  // A made entry's future is also in the map, so the pipeline outlives this call.
  return made.get();
}

void Pipelines::warm(const Program& program, uint32_t workgroup_size) {
  bool created = false;
  (void)entry(program, workgroup_size, created);
}

std::vector<std::pair<std::string, std::string>> Pipelines::statistics(VkPipeline pipeline) const {
  std::vector<std::pair<std::string, std::string>> out;
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, nullptr, pipeline};
  uint32_t n = 0;
  if (dev_.fn.vkGetPipelineExecutablePropertiesKHR(dev_.handle, &info, &n, nullptr) != VK_SUCCESS) return out;
  std::vector<VkPipelineExecutablePropertiesKHR> execs(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (dev_.fn.vkGetPipelineExecutablePropertiesKHR(dev_.handle, &info, &n, execs.data()) != VK_SUCCESS) return out;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, pipeline, e};
    uint32_t m = 0;
    if (dev_.fn.vkGetPipelineExecutableStatisticsKHR(dev_.handle, &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (dev_.fn.vkGetPipelineExecutableStatisticsKHR(dev_.handle, &ei, &m, st.data()) != VK_SUCCESS) continue;
    // One compute executable is the usual case; a second one's names get its own prefix.
    const std::string prefix = n > 1 ? cat(execs[e].name, ": ") : "";
    for (const VkPipelineExecutableStatisticKHR& s : st) {
      std::string v;
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = cat(s.value.f64); break;
        default: continue;
      }
      out.emplace_back(prefix + s.name, v);
    }
  }
  return out;
}

Pipeline Pipelines::create(const Program& program, uint32_t workgroup_size) const {
  const Reflection& r = program.reflection;
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (const StorageBinding& b : r.buffers)
    bindings.push_back({b.binding, b.image ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                        VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, r.push_size};
  VkShaderModule module = VK_NULL_HANDLE;
  Pipeline p;
  try {
    VkDescriptorSetLayoutCreateInfo set_ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_ci.bindingCount = uint32_t(bindings.size());
    set_ci.pBindings = bindings.data();
    check(dev_.fn.vkCreateDescriptorSetLayout(dev_.handle, &set_ci, nullptr, &p.set_layout),
          "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo layout_ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_ci.setLayoutCount = 1;
    layout_ci.pSetLayouts = &p.set_layout;
    layout_ci.pushConstantRangeCount = r.push_size ? 1 : 0;
    layout_ci.pPushConstantRanges = &push;
    check(dev_.fn.vkCreatePipelineLayout(dev_.handle, &layout_ci, nullptr, &p.layout), "vkCreatePipelineLayout");

    Phase ph("vulkan: create pipeline");
    VkShaderModuleCreateInfo module_ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    const std::vector<uint32_t> rolled = roll_loops_ ? with_loops_rolled(program.spirv) : std::vector<uint32_t>{};
    const std::vector<uint32_t>& code = roll_loops_ ? rolled : program.spirv;
    module_ci.codeSize = code.size() * sizeof(uint32_t);
    module_ci.pCode = code.data();
    check(dev_.fn.vkCreateShaderModule(dev_.handle, &module_ci, nullptr, &module), "vkCreateShaderModule");
    VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
    VkSpecializationInfo spec{1, &entry, sizeof(uint32_t), &workgroup_size};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = p.layout;
    if (capture_stats_) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    check(dev_.fn.vkCreateComputePipelines(dev_.handle, VK_NULL_HANDLE, 1, &ci, nullptr, &p.pipeline),
          "vkCreateComputePipelines");
    if (capture_stats_) p.stats = statistics(p.pipeline);
  } catch (...) {
    dev_.fn.vkDestroyShaderModule(dev_.handle, module, nullptr);
    destroy(p);
    throw;
  }
  // A pipeline keeps what it needs of the module.
  dev_.fn.vkDestroyShaderModule(dev_.handle, module, nullptr);
  return p;
}

}  // namespace ts::vk
