#pragma once
// Kernel text assembly and the in-memory SPIR-V cache: a kernel is compiled and reflected once per
// distinct text (preamble + dtype defines + plan defines + source), whatever the device.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/op.h"
#include "gpu/vulkan/reflect.h"

namespace ts::vk {

struct Program {
  uint64_t id = 0;  // distinct per text: keys the per-device pipelines
  std::vector<uint32_t> spirv;
  Reflection reflection;
};

class Programs {
 public:
  // Throws std::runtime_error naming the kernel: unknown kernel, compile error, unbindable resources.
  const Program& get(const Dispatch& d, DType dtype);
  void set_source(const std::string& kernel, std::string source) { overrides_[kernel] = std::move(source); }

  uint64_t compiles = 0;
  uint64_t cache_hits = 0;

 private:
  std::map<std::string, std::string> overrides_;
  std::unordered_map<std::string, Program> cache_;  // keyed by the full text: no collisions to reason about
};

}  // namespace ts::vk
