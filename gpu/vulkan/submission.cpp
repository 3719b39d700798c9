#include "gpu/vulkan/submission.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ts::vk {

namespace {

// One step of a plan into the command buffer: its pipeline, descriptor set, push constants, dispatch
// (the checked run and bench's timed repetitions record the same commands).
void record_dispatch(const Device& dev, VkCommandBuffer cmd, const Step& st, VkDescriptorSet set) {
  dev.fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->pipeline);
  dev.fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, st.pipeline->layout, 0, 1, &set, 0, nullptr);
  if (!st.push.empty())
    dev.fn.vkCmdPushConstants(cmd, st.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(st.push.size()),
                              st.push.data());
  dev.fn.vkCmdDispatch(cmd, st.grid.groups[0], st.grid.groups[1], st.grid.groups[2]);
}

// Whole 16-byte texels: kernels may reach 8/16-bit data through 32-bit accesses, layout accessors
// read a buffer's data as 4-lane texels, and an empty tensor still needs a buffer to bind.
VkDeviceSize round16(VkDeviceSize n) { return (n + 15) & ~VkDeviceSize(15); }
VkDeviceSize device_size(const HostBuffer& h) {
  return h.image() ? VkDeviceSize(h.bytes.size()) : std::max<VkDeviceSize>(16, round16(h.device_bytes()));
}

VkBufferImageCopy whole_image(const HostBuffer& h) {
  VkBufferImageCopy r{};  // buffer rows tightly packed: texels x fastest, as HostBuffer::bytes
  r.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  r.imageExtent = {uint32_t(h.phys.extent[0]), uint32_t(h.phys.extent[1]), uint32_t(h.phys.extent[2])};
  return r;
}

void barrier(const Device& dev, VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src, dst};
  dev.fn.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// As barrier(), also moving `images` from layout `from` to `to`: storage images are GENERAL while
// kernels run, transfers use the TRANSFER_*_OPTIMAL layouts (the validation layer warns otherwise).
void barrier(const Device& dev, VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst, const std::vector<VkImage>& images,
             VkImageLayout from, VkImageLayout to) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src, dst};
  std::vector<VkImageMemoryBarrier> ib;
  for (VkImage image : images) {
    VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, nullptr, src, dst, from, to};
    b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    ib.push_back(b);
  }
  dev.fn.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, uint32_t(ib.size()), ib.data());
}

}  // namespace

Submission::~Submission() {
  if (submitted_) dev_.done(seq_);
  dev_.release(ctx_);
  if (queries_) dev_.fn.vkDestroyQueryPool(dev_.handle, queries_, nullptr);
  for (const Slot& s : slots_) {
    if (s.image.image) destroy_image(dev_, images_, s.image);
    pool_.release(s.device, BufferPool::Role::device);
    pool_.release(s.staging, BufferPool::Role::staging);
    pool_.release(s.snapshot, BufferPool::Role::staging);
  }
}

void Submission::upload(const std::vector<HostBuffer>& host, std::atomic<uint64_t>& allocations) {
  for (const HostBuffer& h : host) {
    VkDeviceSize size = device_size(h);
    slots_.emplace_back();
    ++allocations;
    Slot& s = slots_.back();
    if (h.image()) s.image = create_image(dev_, images_, h);
    else s.device = pool_.acquire(size, BufferPool::Role::device);
    if (!s.device.mapped && !h.device_only()) s.staging = pool_.acquire(size, BufferPool::Role::staging);
    if (h.snapshot) s.snapshot = pool_.acquire(size, BufferPool::Role::staging);
    auto* dst = static_cast<uint8_t*>(s.device.mapped ? s.device.mapped : s.staging.mapped);
    for (auto [at, n] : h.uploads()) std::memcpy(dst + at, h.bytes.data() + at, n);  // HostBuffer::fills: on the device
  }
}

VkResult Submission::submit(const std::vector<Step>& steps, const std::vector<HostBuffer>& host) {
  const VkDeviceSize align = dev_.adapter.props.limits.minStorageBufferOffsetAlignment;
  uint32_t nbuffers = 0, nimages = 0;
  for (const Step& st : steps)
    for (auto [binding, index] : st.bindings) ++(host[index].image() ? nimages : nbuffers);
  VkDescriptorPool descriptors = dev_.descriptor_pool(ctx_, uint32_t(steps.size()), nbuffers, nimages);
  std::vector<VkDescriptorSetLayout> layouts;
  for (const Step& st : steps) layouts.push_back(st.pipeline->set_layout);
  std::vector<VkDescriptorSet>& sets = sets_;
  sets.assign(steps.size(), VK_NULL_HANDLE);
  VkDescriptorSetAllocateInfo set_ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, descriptors,
                                     uint32_t(layouts.size()), layouts.data()};
  if (!sets.empty())
    check(dev_.fn.vkAllocateDescriptorSets(dev_.handle, &set_ai, sets.data()), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkDescriptorImageInfo> image_infos;
  infos.reserve(nbuffers);  // the writes point into them
  image_infos.reserve(nimages);
  std::vector<VkWriteDescriptorSet> writes;
  for (size_t i = 0; i < steps.size(); ++i)
    for (auto [binding, index] : steps[i].bindings) {
      const HostBuffer& h = host[index];
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = sets[i];
      w.dstBinding = binding;
      w.descriptorCount = 1;
      if (h.image()) {
        image_infos.push_back({VK_NULL_HANDLE, slots_[index].image.view, VK_IMAGE_LAYOUT_GENERAL});
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        w.pImageInfo = &image_infos.back();
        writes.push_back(w);
        continue;
      }
      if (h.offset % align)
        throw std::runtime_error(cat("vulkan: buffer '", h.name, "' starts at offset ", h.offset,
                                     ", not a multiple of minStorageBufferOffsetAlignment (", align, ")"));
      // An empty tensor still needs a non-empty range: the rest of its (guard) buffer. An input's
      // range covers its last texel whole (accessors load texels); an output's stays exact, its
      // trailing guard included, so that any write past it is dropped rather than unseen.
      VkDeviceSize range = h.size ? VkDeviceSize(h.size) : VK_WHOLE_SIZE;
      if (h.size && !h.read_back)
        range = std::min<VkDeviceSize>(round16(h.size), dev_.adapter.props.limits.maxStorageBufferRange);
      infos.push_back({slots_[index].device.buffer, h.offset, range});
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos.back();
      writes.push_back(w);
    }
  dev_.fn.vkUpdateDescriptorSets(dev_.handle, uint32_t(writes.size()), writes.data(), 0, nullptr);

  const VkCommandBuffer cmd = ctx_.cmd;
  check(dev_.fn.vkResetCommandPool(dev_.handle, ctx_.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(dev_.fn.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");

  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  bool staged = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.staging.buffer; });
  bool filled = std::any_of(host.begin(), host.end(), [](const HostBuffer& h) { return !h.fills.empty(); });
  auto copy = [&](size_t i, VkBuffer from, VkBuffer to) {
    VkBufferCopy region{0, 0, device_size(host[i])};
    dev_.fn.vkCmdCopyBuffer(cmd, from, to, 1, &region);
  };
  // From the slot's buffer or image (then in TRANSFER_SRC_OPTIMAL layout) into a host-visible buffer.
  auto copy_out = [&](size_t i, VkBuffer to) {
    const Slot& s = slots_[i];
    if (!s.image.image) return copy(i, s.device.buffer, to);
    VkBufferImageCopy region = whole_image(host[i]);
    dev_.fn.vkCmdCopyImageToBuffer(cmd, s.image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to, 1, &region);
  };
  std::vector<VkImage> images;
  std::vector<VkImage>& read_images = read_images_;
  read_images.clear();
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].image.image) {
      images.push_back(slots_[i].image.image);
      if (host[i].read_back) read_images.push_back(slots_[i].image.image);
    }
  // Images start undefined: filled in TRANSFER_DST_OPTIMAL, then GENERAL for the kernels.
  if (!images.empty())
    barrier(dev_, cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, images,
            VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
  if (staged || filled) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (s.image.image) {
        VkBufferImageCopy region = whole_image(host[i]);
        dev_.fn.vkCmdCopyBufferToImage(cmd, s.staging.buffer, s.image.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                                       &region);
        continue;
      }
      if (s.staging.buffer) {  // the host's spans only: the fills' spans are written below, on the device
        std::vector<VkBufferCopy> regions;
        for (auto [at, n] : host[i].uploads()) regions.push_back({at, at, n});
        if (host[i].bytes.empty()) regions.push_back({0, 0, device_size(host[i])});
        if (!regions.empty())
          dev_.fn.vkCmdCopyBuffer(cmd, s.staging.buffer, s.device.buffer, uint32_t(regions.size()), regions.data());
      }
      for (const HostBuffer::Fill& f : host[i].fills)
        if (f.size) dev_.fn.vkCmdFillBuffer(cmd, s.device.buffer, f.offset, f.size, f.word);
    }
    barrier(dev_, cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, kShaderRW, images,
            VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (i && !st.concurrent) barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
    record_dispatch(dev_, cmd, st, sets[i]);
    std::vector<size_t> snap;
    std::vector<VkImage> snap_images;
    for (auto [binding, index] : st.bindings) {
      Slot& s = slots_[index];
      if (!s.snapshot.buffer || s.snapped) continue;
      s.snapped = true;
      s.first_kernel = st.kernel;
      snap.push_back(index);
      if (s.image.image) snap_images.push_back(s.image.image);
    }
    if (snap.empty()) continue;
    barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kTransfer, VK_ACCESS_TRANSFER_READ_BIT, snap_images,
            VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    for (size_t index : snap) copy_out(index, slots_[index].snapshot.buffer);
    // The next dispatch may overwrite what was just copied.
    barrier(dev_, cmd, kTransfer, 0, kCompute, kShaderRW, snap_images, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            VK_IMAGE_LAYOUT_GENERAL);
  }
  barrier(dev_, cmd, kCompute | kTransfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          kTransfer | VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT, read_images,
          VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
  if (staged) {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (host[i].read_back && slots_[i].staging.buffer) copy_out(i, slots_[i].staging.buffer);
    barrier(dev_, cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  check(dev_.fn.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

  check(dev_.fn.vkResetFences(dev_.handle, 1, &ctx_.fence), "vkResetFences");
  if (submitted_) dev_.done(seq_);
  VkResult r = dev_.submit(cmd, ctx_.fence, seq_);
  submitted_ = r == VK_SUCCESS || r == VK_ERROR_DEVICE_LOST;
  return r;
}

VkResult Submission::wait(uint64_t timeout_ns) const {
  const VkResult r = dev_.fn.vkWaitForFences(dev_.handle, 1, &ctx_.fence, VK_TRUE, timeout_ns);
  if (r == VK_SUCCESS) dev_.done(seq_);
  return r;
}

bool Submission::finished() const {
  return !submitted_ || dev_.fn.vkGetFenceStatus(dev_.handle, ctx_.fence) != VK_NOT_READY;
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

VkResult Submission::submit_timed(const std::vector<Step>& steps, uint32_t reps, uint32_t stream, uint32_t untimed) {
  const Adapter& a = dev_.adapter;
  if (!a.timestamp_bits)
    throw Unsupported("", cat("vulkan: ", a.props.deviceName, "'s compute queue has no timestamps (timestampValidBits = 0)"));
  if (queries_ && query_capacity_ < 2 * reps) {
    dev_.fn.vkDestroyQueryPool(dev_.handle, queries_, nullptr);
    queries_ = VK_NULL_HANDLE;
  }
  if (!queries_) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = query_capacity_ = std::max(2 * reps, 2u);
    check(dev_.fn.vkCreateQueryPool(dev_.handle, &qi, nullptr, &queries_), "vkCreateQueryPool");
  }
  const VkCommandBuffer cmd = ctx_.cmd;
  check(dev_.fn.vkResetCommandPool(dev_.handle, ctx_.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(dev_.fn.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  dev_.fn.vkCmdResetQueryPool(cmd, queries_, 0, 2 * reps);
  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  if (!images_general_ && !read_images_.empty())
    barrier(dev_, cmd, kTransfer, VK_ACCESS_TRANSFER_READ_BIT, kCompute, kShaderRW, read_images_,
            VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
  images_general_ = true;
  for (uint32_t r = 0; r < reps; ++r) {
    for (uint32_t i = 0; i < untimed; ++i) {
      barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
      record_dispatch(dev_, cmd, steps[i], sets_[i]);
    }
    // Repetitions do not overlap: each starts once the previous one's writes (and the untimed
    // steps) are done.
    barrier(dev_, cmd, kCompute | kTransfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, kCompute,
            kShaderRW);
    // Both stamps at BOTTOM_OF_PIPE: each is written once every earlier command has completed, so the
    // interval is the chain from the previous work's end to its own.
    dev_.fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * r);
    // TimingBudget::stream chains in the interval, ordered as one chain's dispatches are.
    for (uint32_t s = 0; s < stream; ++s)
      for (size_t i = untimed; i < steps.size(); ++i) {
        if (i > untimed ? !steps[i].concurrent : s > 0) barrier(dev_, cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
        record_dispatch(dev_, cmd, steps[i], sets_[i]);
      }
    dev_.fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * r + 1);
  }
  check(dev_.fn.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  check(dev_.fn.vkResetFences(dev_.handle, 1, &ctx_.fence), "vkResetFences");
  if (submitted_) dev_.done(seq_);
  VkResult r = dev_.submit(cmd, ctx_.fence, seq_);
  submitted_ = submitted_ || r == VK_SUCCESS || r == VK_ERROR_DEVICE_LOST;
  return r;
}

std::vector<double> Submission::timed_seconds(uint32_t reps) const {
  std::vector<uint64_t> stamps(2 * size_t(reps));
  check(dev_.fn.vkGetQueryPoolResults(dev_.handle, queries_, 0, 2 * reps, stamps.size() * sizeof(uint64_t),
                                      stamps.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const uint32_t bits = dev_.adapter.timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;  // the counter wraps at 2^bits
  const double ns_per_tick = dev_.adapter.props.limits.timestampPeriod;
  std::vector<double> out;
  for (uint32_t r = 0; r < reps; ++r) out.push_back(double((stamps[2 * r + 1] - stamps[2 * r]) & mask) * ns_per_tick * 1e-9);
  return out;
}

}  // namespace ts::vk
