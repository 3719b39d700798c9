#include "gpu/vulkan/buffers.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace ts::vk {

namespace {

constexpr VkMemoryPropertyFlags kDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

// Idle buffers kept beyond this are freed: the pool saves allocation calls, not memory.
constexpr VkDeviceSize kMaxIdleBytes = 1ull << 30;

uint32_t find_type(const VkPhysicalDeviceMemoryProperties& m, uint32_t allowed, VkMemoryPropertyFlags need) {
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) && (m.memoryTypes[i].propertyFlags & need) == need) return i;
  return UINT32_MAX;
}

}  // namespace

BufferPool::~BufferPool() {
  for (auto& [key, b] : idle_) destroy(b);
}

Buffer BufferPool::acquire(VkDeviceSize size, Role role) {
  // Power-of-two capacities (at least a page), so that cases of similar sizes share buffers.
  VkDeviceSize capacity = std::bit_ceil(std::max<VkDeviceSize>(size, 4096));
  std::unique_lock lock(mu_);
  if (auto it = idle_.find({role, capacity}); it != idle_.end()) {
    Buffer b = it->second;
    idle_.erase(it);
    idle_bytes_ -= capacity;
    return b;
  }
  lock.unlock();
  return create(capacity, role);
}

void BufferPool::release(const Buffer& b, Role role) {
  if (!b.buffer) return;
  std::unique_lock lock(mu_);
  if (idle_bytes_ + b.capacity > kMaxIdleBytes) return destroy(b);
  idle_.emplace(std::make_pair(role, b.capacity), b);
  idle_bytes_ += b.capacity;
}

void BufferPool::destroy(const Buffer& b) const {
  dev_.fn.vkDestroyBuffer(dev_.handle, b.buffer, nullptr);
  dev_.fn.vkFreeMemory(dev_.handle, b.memory, nullptr);  // unmaps too
}

Buffer BufferPool::create(VkDeviceSize capacity, Role role) const {
  Buffer b;
  b.capacity = capacity;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = capacity;
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
      // Device-local memory that is also host-cached is the host's own memory: map it and skip
      // staging. Device-local + host-visible without HOST_CACHED is a PCIe BAR window (small,
      // uncached reads): stage instead.
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
    check(dev_.fn.vkBindBufferMemory(dev_.handle, b.buffer, b.memory, 0), "vkBindBufferMemory");
    if (map) check(dev_.fn.vkMapMemory(dev_.handle, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  } catch (...) {
    destroy(b);
    throw;
  }
  return b;
}

}  // namespace ts::vk
