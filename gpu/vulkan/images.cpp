#include "gpu/vulkan/images.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "core/contract.h"

namespace ts::vk {

namespace {

constexpr VkImageUsageFlags kUsage =
    VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;

const char* format_name(VkFormat f) {
  switch (f) {
    case VK_FORMAT_R32G32B32A32_SFLOAT: return "rgba32f (VK_FORMAT_R32G32B32A32_SFLOAT)";
    case VK_FORMAT_R16G16B16A16_SFLOAT: return "rgba16f (VK_FORMAT_R16G16B16A16_SFLOAT)";
    case VK_FORMAT_R16G16B16A16_UINT: return "rgba16ui (VK_FORMAT_R16G16B16A16_UINT)";
    default: return "an unknown format";
  }
}

}  // namespace

TexelFormat texel_format(DType t) {
  switch (t) {
    case DType::f32: return {VK_FORMAT_R32G32B32A32_SFLOAT, "rgba32f", false, "texture3d:rgba32float"};
    case DType::f16: return {VK_FORMAT_R16G16B16A16_SFLOAT, "rgba16f", false, "texture3d:rgba16float"};
    case DType::bf16: return {VK_FORMAT_R16G16B16A16_UINT, "rgba16ui", true, "texture3d:rgba16uint"};
    default: break;
  }
  throw Unsupported("", cat("vulkan: no texture format holds ", dtype_name(t), " tensors"));
}

const std::vector<TexelFormat>& texel_formats() {
  static const std::vector<TexelFormat> all = {texel_format(DType::f32), texel_format(DType::f16),
                                               texel_format(DType::bf16)};
  return all;
}

bool storage_image_3d(const Adapter& a, VkFormat f) {
  VkFormatProperties fp{};
  vkGetPhysicalDeviceFormatProperties(a.handle, f, &fp);
  const VkFormatFeatureFlags need =
      VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
  if ((fp.optimalTilingFeatures & need) != need) return false;
  VkImageFormatProperties ip{};
  return vkGetPhysicalDeviceImageFormatProperties(a.handle, f, VK_IMAGE_TYPE_3D, VK_IMAGE_TILING_OPTIMAL, kUsage, 0,
                                                  &ip) == VK_SUCCESS;
}

void check_image_support(const Adapter& a, const HostBuffer& h) {
  const TexelFormat tf = texel_format(h.dtype);
  const VkFormat f = tf.format;
  // `capability`: "" where the format is there but the image is too large for it.
  auto refuse = [&](const std::string& why, const char* capability = "") {
    throw Unsupported(capability, cat("vulkan: tensor ", h.name, " as ", layout_name(h.phys.layout), " needs a 3-D storage image of ",
                          h.phys.extent[0], "x", h.phys.extent[1], "x", h.phys.extent[2], " texels in ", format_name(f),
                          "; ", a.props.deviceName, " ", why));
  };
  VkFormatProperties fp{};
  vkGetPhysicalDeviceFormatProperties(a.handle, f, &fp);
  const VkFormatFeatureFlags need =
      VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
  if ((fp.optimalTilingFeatures & need) != need)
    refuse("does not support that format for storage images (VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT with transfers)",
           tf.capability);
  VkImageFormatProperties ip{};
  VkResult r = vkGetPhysicalDeviceImageFormatProperties(a.handle, f, VK_IMAGE_TYPE_3D, VK_IMAGE_TILING_OPTIMAL, kUsage,
                                                        0, &ip);
  if (r == VK_ERROR_FORMAT_NOT_SUPPORTED) refuse("does not support 3-D storage images of that format", tf.capability);
  check(r, "vkGetPhysicalDeviceImageFormatProperties");
  const uint32_t max[3] = {ip.maxExtent.width, ip.maxExtent.height, ip.maxExtent.depth};
  for (int axis = 0; axis < 3; ++axis)
    if (uint64_t(h.phys.extent[axis]) > max[axis])
      refuse(cat("allows extent ", "xyz"[axis], " up to ", max[axis], " for it, not ", h.phys.extent[axis]));
  if (h.phys.bytes > ip.maxResourceSize)
    refuse(cat("allows ", ip.maxResourceSize, " bytes for it (maxResourceSize), not ", h.phys.bytes));
}

namespace {
// Idle blocks kept beyond this are freed: the pool saves allocation calls, not memory.
constexpr VkDeviceSize kMaxIdleBytes = 1ull << 30;
}  // namespace

ImageMemory::~ImageMemory() {
  for (auto& [key, m] : idle_) dev_.fn.vkFreeMemory(dev_.handle, m, nullptr);
}

ImageMemory::Block ImageMemory::acquire(uint32_t type, VkDeviceSize size) {
  const VkDeviceSize capacity = std::bit_ceil(std::max<VkDeviceSize>(size, 4096));
  {
    std::lock_guard lock(mu_);
    if (auto it = idle_.find({type, capacity}); it != idle_.end()) {
      Block b{it->second, type, capacity};
      idle_.erase(it);
      idle_bytes_ -= capacity;
      return b;
    }
  }
  Block b{VK_NULL_HANDLE, type, capacity};
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, capacity, type};
  check(dev_.fn.vkAllocateMemory(dev_.handle, &ai, nullptr, &b.memory), "vkAllocateMemory");
  return b;
}

void ImageMemory::release(const Block& b) {
  if (!b.memory) return;
  std::lock_guard lock(mu_);
  if (idle_bytes_ + b.capacity > kMaxIdleBytes) return dev_.fn.vkFreeMemory(dev_.handle, b.memory, nullptr);
  idle_.emplace(std::make_pair(b.type, b.capacity), b.memory);
  idle_bytes_ += b.capacity;
}

Image create_image(const Device& dev, ImageMemory& pool, const HostBuffer& h) {
  const VkFormat format = texel_format(h.dtype).format;
  Image img;
  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = VK_IMAGE_TYPE_3D;
  ci.format = format;
  ci.extent = {uint32_t(h.phys.extent[0]), uint32_t(h.phys.extent[1]), uint32_t(h.phys.extent[2])};
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = VK_SAMPLE_COUNT_1_BIT;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = kUsage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  check(dev.fn.vkCreateImage(dev.handle, &ci, nullptr, &img.image), "vkCreateImage");
  try {
    VkMemoryRequirements req;
    dev.fn.vkGetImageMemoryRequirements(dev.handle, img.image, &req);
    const VkPhysicalDeviceMemoryProperties& m = dev.adapter.memory;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < m.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (m.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        type = i;
    for (uint32_t i = 0; i < m.memoryTypeCount && type == UINT32_MAX; ++i)
      if (req.memoryTypeBits & (1u << i)) type = i;
    if (type == UINT32_MAX) throw std::runtime_error(cat("vulkan: no memory type can hold image ", h.name));
    img.memory = pool.acquire(type, req.size);  // offset 0 meets any alignment
    check(dev.fn.vkBindImageMemory(dev.handle, img.image, img.memory.memory, 0), "vkBindImageMemory");
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = img.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_3D;
    vi.format = format;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check(dev.fn.vkCreateImageView(dev.handle, &vi, nullptr, &img.view), "vkCreateImageView");
  } catch (...) {
    destroy_image(dev, pool, img);
    throw;
  }
  return img;
}

void destroy_image(const Device& dev, ImageMemory& pool, const Image& img) {
  dev.fn.vkDestroyImageView(dev.handle, img.view, nullptr);
  dev.fn.vkDestroyImage(dev.handle, img.image, nullptr);
  pool.release(img.memory);  // after the image that was bound to it
}

}  // namespace ts::vk
