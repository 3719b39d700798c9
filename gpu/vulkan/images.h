#pragma once
// 3-D storage images for texture3d tensors (gpu/ACCESSORS.md "Physical resources"): one RGBA texel
// per 4 lanes, created per case with its own memory and a view for the descriptor.
#include "gpu/gpu_backend.h"
#include "gpu/vulkan/context.h"

namespace ts::vk {

// How a dtype's texels are held: float32 -> rgba32f, float16 -> rgba16f, bfloat16 -> rgba16ui (raw
// bits, converted in the accessors). `glsl` is the shader's format qualifier for the same format.
struct TexelFormat {
  VkFormat format = VK_FORMAT_UNDEFINED;
  const char* glsl = "";
  bool integer = false;  // read as uimage3D
};
// Throws Unsupported for a dtype no texture format holds (int8 tensors use packed int8 buffers).
TexelFormat texel_format(DType t);

// Throws Unsupported naming the format and the number that does not fit when the device cannot
// hold `h` as a 3-D storage image that transfers copy to and from.
void check_image_support(const Adapter& adapter, const HostBuffer& h);

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

// An image of h's extents and format, in device-local memory; contents undefined.
Image create_image(const Device& dev, const HostBuffer& h);
void destroy_image(const Device& dev, const Image& img);

}  // namespace ts::vk
