#pragma once
// Storage buffers of one device, recycled across cases: on NVIDIA a memory allocation costs more
// than a small case's whole dispatch, so a sweep of small cases would be dominated by it.
#include <map>
#include <mutex>
#include <utility>

#include "gpu/vulkan/context.h"

namespace ts::vk {

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // set when the host can reach the memory directly
  VkDeviceSize capacity = 0;
};

class BufferPool {
 public:
  // device: device-local, mapped too when that memory is the host's own (CPU, unified memory);
  // staging: host-visible, the host's side of a device buffer that is not mapped.
  enum class Role { device, staging };

  explicit BufferPool(const Device& device) : dev_(device) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `size` bytes, recycled or new. Its contents are whatever a previous case
  // left: every case uploads all of its bytes.
  Buffer acquire(VkDeviceSize size, Role role);
  void release(const Buffer& b, Role role);

 private:
  Buffer create(VkDeviceSize capacity, Role role) const;
  void destroy(const Buffer& b) const;

  const Device& dev_;
  std::mutex mu_;  // cases in flight on several threads share the pool
  std::multimap<std::pair<Role, VkDeviceSize>, Buffer> idle_;  // by (role, capacity)
  VkDeviceSize idle_bytes_ = 0;
};

}  // namespace ts::vk
