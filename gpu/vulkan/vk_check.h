#pragma once
// volk first: it defines VK_NO_PROTOTYPES before vulkan.h, so every Vulkan call goes through the
// pointers volk loads at run time (the binary starts, and reports, without a Vulkan loader).
#include <volk.h>

#include <string>

namespace ts::vk {

std::string result_name(VkResult r);  // "VK_ERROR_DEVICE_LOST"
std::string version_string(uint32_t v);  // "1.3.239"

// Throws std::runtime_error("vulkan: <what> failed: <result>") unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

}  // namespace ts::vk
