#include "gpu/vulkan/roll_loops.h"

#include <stdexcept>

namespace ts::vk {

std::vector<uint32_t> with_loops_rolled(std::vector<uint32_t> spirv) {
  constexpr uint32_t kOpLoopMerge = 246, kUnroll = 0x1, kDontUnroll = 0x2, kDependencyInfinite = 0x4;
  for (size_t at = 5; at < spirv.size();) {  // after the header's 5 words
    const uint32_t count = spirv[at] >> 16;
    if (count == 0 || at + count > spirv.size()) throw std::runtime_error("vulkan: malformed SPIR-V instruction");
    // OpLoopMerge %merge %continue LoopControl [parameters]: controls with parameters are left alone.
    if ((spirv[at] & 0xFFFF) == kOpLoopMerge && count == 4 &&
        (spirv[at + 3] & ~(kUnroll | kDontUnroll | kDependencyInfinite)) == 0)
      spirv[at + 3] = (spirv[at + 3] & ~kUnroll) | kDontUnroll;
    at += count;
  }
  return spirv;
}

}  // namespace ts::vk
