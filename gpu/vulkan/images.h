#pragma once
// 3-D storage images for texture3d tensors (gpu/ACCESSORS.md "Physical resources"): one RGBA texel
// per 4 lanes, created per case with a view for the descriptor, in device memory recycled across
// cases (an allocation costs more than a small case on NVIDIA, as BufferPool says).
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/vulkan/context.h"

namespace ts::vk {

// How a dtype's texels are held: float32 -> rgba32f, float16 -> rgba16f, bfloat16 -> rgba16ui (raw
// bits, converted in the accessors). `glsl` is the shader's format qualifier for the same format.
struct TexelFormat {
  VkFormat format = VK_FORMAT_UNDEFINED;
  const char* glsl = "";
  bool integer = false;  // read as uimage3D
  const char* capability = "";  // the DeviceInfo word, WebGPU's format name: "texture3d:rgba32float"
};
// Throws Unsupported for a dtype no texture format holds (int8 tensors use packed int8 buffers).
TexelFormat texel_format(DType t);
// The texel formats of the dtypes that have one, for info().
const std::vector<TexelFormat>& texel_formats();
// Whether the device makes 3-D storage images of `f` that transfers copy to and from.
bool storage_image_3d(const Adapter& adapter, VkFormat f);

// Throws Unsupported naming the format and the number that does not fit when the device cannot
// hold `h` as a 3-D storage image that transfers copy to and from.
void check_image_support(const Adapter& adapter, const HostBuffer& h);

// Memory blocks for images, by memory type and power-of-two capacity; an image binds one at offset 0.
class ImageMemory {
 public:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint32_t type = 0;
    VkDeviceSize capacity = 0;
  };
  explicit ImageMemory(const Device& device) : dev_(device) {}
  ~ImageMemory();
  ImageMemory(const ImageMemory&) = delete;
  ImageMemory& operator=(const ImageMemory&) = delete;

  Block acquire(uint32_t type, VkDeviceSize size);  // recycled or new; contents undefined
  void release(const Block& b);

 private:
  const Device& dev_;
  std::mutex mu_;  // cases in flight on several threads share the blocks
  std::multimap<std::pair<uint32_t, VkDeviceSize>, VkDeviceMemory> idle_;
  VkDeviceSize idle_bytes_ = 0;
};

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  ImageMemory::Block memory;
};

// An image of h's extents and format, in device-local memory from `pool`; contents undefined.
Image create_image(const Device& dev, ImageMemory& pool, const HostBuffer& h);
void destroy_image(const Device& dev, ImageMemory& pool, const Image& img);

}  // namespace ts::vk
