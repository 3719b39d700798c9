#pragma once
// The resources of a WGSL kernel, read from its text: WGSL has no reflection API reachable from
// C++, and the binding convention (PROTOCOL.md, "Kernels") is narrow enough for a scanner.
//   @group(0) @binding(N) var<storage, read|read_write> NAME : array<...>;  -> tensor NAME
//   @group(0) @binding(N) var<uniform> pc : Params;  struct Params { a: u32, b: f32, ... }
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts::webgpu {

struct StorageBinding {
  uint32_t binding = 0;
  std::string array;  // the WGSL name, e.g. "out_" (bound_tensor() maps it to a tensor)
  bool writable = false;
};

struct UniformMember {
  enum class Type { u32, i32, f32 };
  std::string name;
  Type type = Type::u32;
};

struct UniformBinding {
  uint32_t binding = 0;
  std::vector<UniformMember> members;  // in order, 4 bytes each
};

struct WgslResources {
  std::vector<StorageBinding> storage;
  std::optional<UniformBinding> uniform;
};

// Throws std::runtime_error naming `kernel` and the declaration it cannot read.
WgslResources reflect_wgsl(std::string_view source, const std::string& kernel);

}  // namespace ts::webgpu
