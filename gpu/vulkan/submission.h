#pragma once
// One case on the device: a buffer per host buffer and the whole plan in the device's command
// buffer. Kept alive, with its device, while a timed-out kernel may still be running.
#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/vulkan/buffers.h"
#include "gpu/vulkan/pipelines.h"

namespace ts::vk {

// One dispatch, ready to record.
struct Step {
  const Pipeline* pipeline = nullptr;
  std::vector<std::pair<uint32_t, size_t>> bindings;  // (binding, index of the host buffer)
  std::vector<uint8_t> push;                          // the push-constant block, filled
  Grid grid;
};

class Submission {
 public:
  Submission(Device& device, BufferPool& pool) : dev_(device), pool_(pool) {}
  ~Submission();
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  // A device buffer per host buffer, filled with its bytes; counts each buffer.
  void upload(const std::vector<HostBuffer>& host, uint64_t& allocations);
  // Records the steps with a barrier between consecutive dispatches (later ones read earlier
  // outputs) and the copies back of read_back buffers; submits.
  VkResult submit(const std::vector<Step>& steps, const std::vector<HostBuffer>& host);
  VkResult wait(uint64_t timeout_ns) const;
  bool finished() const;  // the fence signalled or the device is lost: safe to destroy
  void read_back(std::vector<HostBuffer>& host) const;

 private:
  struct Slot {
    Buffer device;
    Buffer staging;  // empty when the device buffer itself is mapped
  };

  Device& dev_;
  BufferPool& pool_;
  std::vector<Slot> slots_;
  bool submitted_ = false;  // the device's fence is this case's
};

}  // namespace ts::vk
