#pragma once
// One case on the device: a buffer or a 3-D image per host buffer and the whole plan in the device's
// command buffer. Kept alive, with its device, while a timed-out kernel may still be running.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/vulkan/buffers.h"
#include "gpu/vulkan/images.h"
#include "gpu/vulkan/pipelines.h"

namespace ts::vk {

// One dispatch, ready to record.
struct Step {
  std::string kernel;
  const Pipeline* pipeline = nullptr;
  std::vector<std::pair<uint32_t, size_t>> bindings;  // (binding, index of the host buffer)
  std::vector<uint8_t> push;                          // the push-constant block, filled
  Grid grid;
  bool concurrent = false;  // Dispatch::concurrent: no barrier before it
};

class Submission {
 public:
  // Holds one of the device's case contexts until destroyed.
  Submission(Device& device, BufferPool& pool, ImageMemory& images)
      : dev_(device), pool_(pool), images_(images), ctx_(device.acquire()) {}
  ~Submission();
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  // A device buffer (an image for texture layouts) per host buffer, filled with its bytes; counts each.
  void upload(const std::vector<HostBuffer>& host, std::atomic<uint64_t>& allocations);
  // Records the steps with a barrier between consecutive dispatches (later ones read earlier
  // outputs; none before a Step::concurrent one), a copy of each snapshot buffer right after the
  // first step that binds it, and the copies back of read_back buffers; submits.
  VkResult submit(const std::vector<Step>& steps, const std::vector<HostBuffer>& host);
  VkResult wait(uint64_t timeout_ns) const;
  bool finished() const;  // the fence signalled or the device is lost: safe to destroy
  // Whether the queue holds an earlier case's work that has not finished (Device::earlier_in_flight).
  bool queued_behind() const { return submitted_ && dev_.earlier_in_flight(seq_); }
  // read_back buffers' bytes, and snapshot buffers' first_use / first_kernel.
  void read_back(std::vector<HostBuffer>& host) const;

  // Timing (GpuBackend::time_plan), once submit()'s run has finished: records `reps` repetitions
  // of the steps alone, each between two timestamps and after a barrier on the previous one's
  // writes, and submits them. Throws Unsupported on a queue without timestamps.
  // The first `untimed` steps (TimingBudget::untimed, at most steps.size()) run before each
  // repetition's barrier, outside its stamps, which wait for them.
  VkResult submit_timed(const std::vector<Step>& steps, uint32_t reps, uint32_t stream = 1, uint32_t untimed = 0);
  // The device seconds of each repetition of the last submit_timed(), once it finished.
  std::vector<double> timed_seconds(uint32_t reps) const;

 private:
  struct Slot {
    Buffer device;    // empty for an image
    Image image;      // texture layouts: the tensor's image, in VK_IMAGE_LAYOUT_GENERAL once filled
    Buffer staging;   // empty when the device buffer itself is mapped; always there for an image
    Buffer snapshot;  // host-visible: the buffer after the first step binding it (HostBuffer::snapshot only)
    bool snapped = false;
    std::string first_kernel;  // that step's kernel
  };

  Device& dev_;
  BufferPool& pool_;
  ImageMemory& images_;
  CaseContext& ctx_;
  std::vector<Slot> slots_;
  bool submitted_ = false;  // ctx_'s fence is this case's
  uint64_t seq_ = 0;        // the last submission's place in the queue's order
  std::vector<VkDescriptorSet> sets_;  // submit()'s, reused by submit_timed()
  std::vector<VkImage> read_images_;   // left in TRANSFER_SRC_OPTIMAL by submit()
  bool images_general_ = false;        // submit_timed() moved them back to GENERAL
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
};

}  // namespace ts::vk
