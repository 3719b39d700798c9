#include "gpu/vulkan/submission.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ts::vk {

namespace {

constexpr VkMemoryPropertyFlags kDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

uint32_t find_type(const VkPhysicalDeviceMemoryProperties& m, uint32_t allowed, VkMemoryPropertyFlags need) {
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) && (m.memoryTypes[i].propertyFlags & need) == need) return i;
  return UINT32_MAX;
}

// Whole words: kernels may reach 8/16-bit data through 32-bit accesses, and an empty tensor still
// needs a buffer to bind.
VkDeviceSize device_size(const HostBuffer& h) {
  return std::max<VkDeviceSize>(4, (h.bytes.size() + 3) & ~VkDeviceSize(3));
}

void barrier(const Device& dev, VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src, dst};
  dev.fn.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

}  // namespace

Submission::~Submission() {
  if (cmd_) dev_.fn.vkFreeCommandBuffers(dev_.handle, dev_.pool, 1, &cmd_);
  dev_.fn.vkDestroyFence(dev_.handle, fence_, nullptr);
  dev_.fn.vkDestroyDescriptorPool(dev_.handle, descriptors_, nullptr);
  for (const Slot& s : slots_) {
    destroy(s.device);
    destroy(s.staging);
  }
}

void Submission::destroy(const Buffer& b) const {
  dev_.fn.vkDestroyBuffer(dev_.handle, b.buffer, nullptr);
  dev_.fn.vkFreeMemory(dev_.handle, b.memory, nullptr);  // unmaps too
}

Submission::Buffer Submission::create(VkDeviceSize size, Role role, uint64_t& allocations) const {
  Buffer b;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = size;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(dev_.fn.vkCreateBuffer(dev_.handle, &ci, nullptr, &b.buffer), "vkCreateBuffer");
  try {
    VkMemoryRequirements req;
    dev_.fn.vkGetBufferMemoryRequirements(dev_.handle, b.buffer, &req);
    const VkPhysicalDeviceMemoryProperties& m = dev_.adapter.memory;
    uint32_t type;
    bool map = true;
    if (role == Role::device) {
      // Device-local memory that is also host-cached is the host's own memory (CPU and unified-memory
      // devices): map it and skip staging. Device-local + host-visible without HOST_CACHED is a PCIe
      // BAR window (small, uncached reads): stage instead.
      type = find_type(m, req.memoryTypeBits, kDeviceLocal | kHost | kCached);
      if (type == UINT32_MAX) {
        map = false;
        type = find_type(m, req.memoryTypeBits, kDeviceLocal);
      }
    } else {
      type = find_type(m, req.memoryTypeBits, kHost | kCached);
      if (type == UINT32_MAX) type = find_type(m, req.memoryTypeBits, kHost);
    }
    if (type == UINT32_MAX) throw std::runtime_error("vulkan: no suitable memory type for a storage buffer");
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size, type};
    check(dev_.fn.vkAllocateMemory(dev_.handle, &ai, nullptr, &b.memory), "vkAllocateMemory");
    ++allocations;
    check(dev_.fn.vkBindBufferMemory(dev_.handle, b.buffer, b.memory, 0), "vkBindBufferMemory");
    if (map) check(dev_.fn.vkMapMemory(dev_.handle, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  } catch (...) {
    destroy(b);
    throw;
  }
  return b;
}

void Submission::upload(const std::vector<HostBuffer>& host, uint64_t& allocations) {
  for (const HostBuffer& h : host) {
    VkDeviceSize size = device_size(h);
    slots_.push_back({create(size, Role::device, allocations), {}});
    Slot& s = slots_.back();
    if (!s.device.mapped) s.staging = create(size, Role::staging, allocations);
    void* dst = s.device.mapped ? s.device.mapped : s.staging.mapped;
    std::memcpy(dst, h.bytes.data(), h.bytes.size());
  }
}

VkResult Submission::submit(const std::vector<Step>& steps, const std::vector<HostBuffer>& host) {
  const VkDeviceSize align = dev_.adapter.props.limits.minStorageBufferOffsetAlignment;
  size_t nbindings = 0;
  for (const Step& st : steps) nbindings += st.bindings.size();
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t(std::max<size_t>(1, nbindings))};
  VkDescriptorPoolCreateInfo pool_ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_ci.maxSets = uint32_t(steps.size());
  pool_ci.poolSizeCount = 1;
  pool_ci.pPoolSizes = &pool_size;
  check(dev_.fn.vkCreateDescriptorPool(dev_.handle, &pool_ci, nullptr, &descriptors_), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts;
  for (const Step& st : steps) layouts.push_back(st.pipeline->set_layout);
  std::vector<VkDescriptorSet> sets(steps.size());
  VkDescriptorSetAllocateInfo set_ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, descriptors_,
                                     uint32_t(layouts.size()), layouts.data()};
  check(dev_.fn.vkAllocateDescriptorSets(dev_.handle, &set_ai, sets.data()), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos;
  infos.reserve(nbindings);  // the writes point into it
  std::vector<VkWriteDescriptorSet> writes;
  for (size_t i = 0; i < steps.size(); ++i)
    for (auto [binding, index] : steps[i].bindings) {
      const HostBuffer& h = host[index];
      if (h.offset % align)
        throw std::runtime_error(cat("vulkan: buffer '", h.name, "' starts at offset ", h.offset,
                                     ", not a multiple of minStorageBufferOffsetAlignment (", align, ")"));
      // An empty tensor still needs a non-empty range: the rest of its (guard) buffer.
      infos.push_back({slots_[index].device.buffer, h.offset, h.size ? VkDeviceSize(h.size) : VK_WHOLE_SIZE});
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = sets[i];
      w.dstBinding = binding;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos.back();
      writes.push_back(w);
    }
  dev_.fn.vkUpdateDescriptorSets(dev_.handle, uint32_t(writes.size()), writes.data(), 0, nullptr);

  VkCommandBufferAllocateInfo cmd_ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, dev_.pool,
                                     VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  check(dev_.fn.vkAllocateCommandBuffers(dev_.handle, &cmd_ai, &cmd_), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(dev_.fn.vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");

  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  bool staged = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.staging.buffer; });
  auto copy = [&](size_t i, VkBuffer from, VkBuffer to) {
    VkBufferCopy region{0, 0, device_size(host[i])};
    dev_.fn.vkCmdCopyBuffer(cmd_, from, to, 1, &region);
  };
  if (staged) {
    for (size_t i = 0; i < slots_.size(); ++i) copy(i, slots_[i].staging.buffer, slots_[i].device.buffer);
    barrier(dev_, cmd_, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, kShaderRW);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (i) barrier(dev_, cmd_, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
    dev_.fn.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->pipeline);
    dev_.fn.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->layout, 0, 1, &sets[i], 0,
                                    nullptr);
    if (!st.push.empty())
      dev_.fn.vkCmdPushConstants(cmd_, st.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(st.push.size()),
                                 st.push.data());
    dev_.fn.vkCmdDispatch(cmd_, st.grid.groups[0], st.grid.groups[1], st.grid.groups[2]);
  }
  barrier(dev_, cmd_, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kTransfer | VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
  if (staged) {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (host[i].read_back) copy(i, slots_[i].device.buffer, slots_[i].staging.buffer);
    barrier(dev_, cmd_, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  check(dev_.fn.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");

  VkFenceCreateInfo fence_ci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(dev_.fn.vkCreateFence(dev_.handle, &fence_ci, nullptr, &fence_), "vkCreateFence");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  return dev_.fn.vkQueueSubmit(dev_.queue, 1, &si, fence_);
}

VkResult Submission::wait(uint64_t timeout_ns) const {
  return dev_.fn.vkWaitForFences(dev_.handle, 1, &fence_, VK_TRUE, timeout_ns);
}

bool Submission::finished() const {
  return !fence_ || dev_.fn.vkGetFenceStatus(dev_.handle, fence_) != VK_NOT_READY;
}

void Submission::read_back(std::vector<HostBuffer>& host) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!host[i].read_back) continue;
    const Slot& s = slots_[i];
    std::memcpy(host[i].bytes.data(), s.staging.buffer ? s.staging.mapped : s.device.mapped, host[i].bytes.size());
  }
}

}  // namespace ts::vk
