#include "gpu/vulkan/submission.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ts::vk {

namespace {

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
  for (const Slot& s : slots_) {
    pool_.release(s.device, BufferPool::Role::device);
    pool_.release(s.staging, BufferPool::Role::staging);
    pool_.release(s.snapshot, BufferPool::Role::staging);
  }
}

void Submission::upload(const std::vector<HostBuffer>& host, uint64_t& allocations) {
  for (const HostBuffer& h : host) {
    VkDeviceSize size = device_size(h);
    slots_.push_back({pool_.acquire(size, BufferPool::Role::device), {}});
    ++allocations;
    Slot& s = slots_.back();
    if (!s.device.mapped) s.staging = pool_.acquire(size, BufferPool::Role::staging);
    if (h.snapshot) s.snapshot = pool_.acquire(size, BufferPool::Role::staging);
    void* dst = s.device.mapped ? s.device.mapped : s.staging.mapped;
    if (!h.bytes.empty()) std::memcpy(dst, h.bytes.data(), h.bytes.size());  // an empty vector's data() may be null
  }
}

VkResult Submission::submit(const std::vector<Step>& steps, const std::vector<HostBuffer>& host) {
  const VkDeviceSize align = dev_.adapter.props.limits.minStorageBufferOffsetAlignment;
  size_t nbindings = 0;
  for (const Step& st : steps) nbindings += st.bindings.size();
  VkDescriptorPool descriptors = dev_.descriptor_pool(uint32_t(steps.size()), uint32_t(nbindings));
  std::vector<VkDescriptorSetLayout> layouts;
  for (const Step& st : steps) layouts.push_back(st.pipeline->set_layout);
  std::vector<VkDescriptorSet> sets(steps.size());
  VkDescriptorSetAllocateInfo set_ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, descriptors,
                                     uint32_t(layouts.size()), layouts.data()};
  if (!sets.empty())
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

  const VkCommandBuffer cmd = dev_.cmd;
  check(dev_.fn.vkResetCommandPool(dev_.handle, dev_.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(dev_.fn.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");

  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  bool staged = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.staging.buffer; });
  auto copy = [&](size_t i, VkBuffer from, VkBuffer to) {
    VkBufferCopy region{0, 0, device_size(host[i])};
    dev_.fn.vkCmdCopyBuffer(cmd, from, to, 1, &region);
  };
  if (staged) {
    for (size_t i = 0; i < slots_.size(); ++i) copy(i, slots_[i].staging.buffer, slots_[i].device.buffer);
    barrier(dev_, cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, kShaderRW);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (i) barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
    dev_.fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->pipeline);
    dev_.fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->layout, 0, 1, &sets[i], 0,
                                    nullptr);
    if (!st.push.empty())
      dev_.fn.vkCmdPushConstants(cmd, st.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(st.push.size()),
                                 st.push.data());
    dev_.fn.vkCmdDispatch(cmd, st.grid.groups[0], st.grid.groups[1], st.grid.groups[2]);
    bool copied = false;
    for (auto [binding, index] : st.bindings) {
      Slot& s = slots_[index];
      if (!s.snapshot.buffer || s.snapped) continue;
      if (!copied) barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kTransfer, VK_ACCESS_TRANSFER_READ_BIT);
      copied = true;
      s.snapped = true;
      s.first_kernel = st.kernel;
      copy(index, s.device.buffer, s.snapshot.buffer);
    }
    // The next dispatch may overwrite what was just copied.
    if (copied) barrier(dev_, cmd, kTransfer, 0, kCompute, kShaderRW);
  }
  barrier(dev_, cmd, kCompute | kTransfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          kTransfer | VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
  if (staged) {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (host[i].read_back) copy(i, slots_[i].device.buffer, slots_[i].staging.buffer);
    barrier(dev_, cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  check(dev_.fn.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

  check(dev_.fn.vkResetFences(dev_.handle, 1, &dev_.fence), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  VkResult r = dev_.fn.vkQueueSubmit(dev_.queue, 1, &si, dev_.fence);
  submitted_ = r == VK_SUCCESS || r == VK_ERROR_DEVICE_LOST;
  return r;
}

VkResult Submission::wait(uint64_t timeout_ns) const {
  return dev_.fn.vkWaitForFences(dev_.handle, 1, &dev_.fence, VK_TRUE, timeout_ns);
}

bool Submission::finished() const {
  return !submitted_ || dev_.fn.vkGetFenceStatus(dev_.handle, dev_.fence) != VK_NOT_READY;
}

void Submission::read_back(std::vector<HostBuffer>& host) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    HostBuffer& h = host[i];
    const Slot& s = slots_[i];
    if (h.read_back && !h.bytes.empty())
      std::memcpy(h.bytes.data(), s.staging.buffer ? s.staging.mapped : s.device.mapped, h.bytes.size());
    if (s.snapped) {
      h.first_use.assign(static_cast<const uint8_t*>(s.snapshot.mapped),
                         static_cast<const uint8_t*>(s.snapshot.mapped) + h.bytes.size());
      h.first_kernel = s.first_kernel;
    }
  }
}

}  // namespace ts::vk
