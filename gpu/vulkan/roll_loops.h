#pragma once
// SPIR-V with its loops marked DontUnroll, for devices that compile at their first dispatch.
// No dependencies: VulkanBackend uses it, and so does the layer that gives the Dawn worker's
// modules the same (roll_loops_layer.cpp).
#include <cstdint>
#include <vector>

namespace ts::vk {

// The same module with every loop marked DontUnroll (OpLoopMerge's loop control; a loop whose
// control takes parameters keeps it). A hint only: the loops compute the same values. lavapipe
// compiles a pipeline at its first dispatch, in time that grows with the unrolled loops of the
// tuned kernels (PERFORMANCE.md). Throws std::runtime_error on a malformed instruction stream.
std::vector<uint32_t> with_loops_rolled(std::vector<uint32_t> spirv);

}  // namespace ts::vk
