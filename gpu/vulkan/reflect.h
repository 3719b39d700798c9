#pragma once
// What a kernel's SPIR-V declares, read with SPIRV-Cross: the storage buffers and storage images it
// binds (by the name of each block's first member, or the image's), its push-constant members, and
// the capabilities it needs.
#include <cstdint>
#include <string>
#include <vector>

namespace ts::vk {

struct StorageBinding {
  uint32_t binding = 0;  // in descriptor set 0
  std::string array;     // the block's first member: `buffer XqBuf { DTYPE xq[]; }` -> "xq"; an image's name
  bool image = false;    // a storage image (texture3d tensors), else a storage buffer
};

struct PushMember {
  enum class Type { u32, i32, f32 };
  std::string name;
  uint32_t offset = 0;
  Type type = Type::u32;
};

struct Reflection {
  std::vector<StorageBinding> buffers;  // storage buffers and storage images
  std::vector<PushMember> push;
  uint32_t push_size = 0;  // bytes of the push-constant block, 0 if none
  std::vector<uint32_t> capabilities;  // SPIR-V OpCapability values
  // Workgroup (shared) memory: the sum of the natural sizes of the Workgroup variables whose size
  // is a compile-time constant (an array sized by a specialization constant is not counted).
  uint64_t shared_bytes = 0;
};

// Throws std::runtime_error naming the kernel for anything the backend cannot bind: other resource
// kinds, descriptor sets other than 0, arrays of blocks, non-scalar push-constant members.
Reflection reflect(const std::vector<uint32_t>& spirv, const std::string& kernel);

}  // namespace ts::vk
