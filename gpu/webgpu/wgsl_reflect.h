#pragma once
// The resources of a WGSL kernel, read from its text: WGSL has no reflection API reachable from
// C++, and the binding convention (PROTOCOL.md, "Kernels") is narrow enough for a scanner. It reads
// kernels after their TS_INPUT / TS_OUTPUT lines became resources (gpu/webgpu/accessors.h):
//   @group(0) @binding(N) var<storage, read|read_write> NAME : array<...>;  -> tensor NAME
//   @group(0) @binding(N) var NAME : texture_3d<f32|u32|i32>;               -> tensor NAME, sampled
//   @group(0) @binding(N) var NAME : texture_storage_3d<FORMAT, write>;     -> tensor NAME, stored
//   @group(0) @binding(N) var<uniform> pc : Params;  struct Params { a: u32, b: f32, ... }
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts::webgpu {

struct StorageBinding {
  enum class Kind { buffer, texture, storage_texture };
  uint32_t binding = 0;
  std::string array;  // the WGSL name, e.g. "out_" (bound_tensor() maps it to a tensor)
  bool writable = false;
  Kind kind = Kind::buffer;
  std::string format;  // texture: its sample type (unfilterable-float, uint, sint); storage_texture: its format
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
