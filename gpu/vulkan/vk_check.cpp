#include "gpu/vulkan/vk_check.h"

#include <stdexcept>

#include "core/contract.h"

namespace ts::vk {

std::string result_name(VkResult r) {
  switch (r) {
#define TS_VK_RESULT(x) case x: return #x;
    TS_VK_RESULT(VK_SUCCESS)
    TS_VK_RESULT(VK_NOT_READY)
    TS_VK_RESULT(VK_TIMEOUT)
    TS_VK_RESULT(VK_INCOMPLETE)
    TS_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    TS_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TS_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    TS_VK_RESULT(VK_ERROR_DEVICE_LOST)
    TS_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    TS_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    TS_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    TS_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    TS_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    TS_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    TS_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TS_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    TS_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    TS_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
    TS_VK_RESULT(VK_ERROR_UNKNOWN)
#undef TS_VK_RESULT
    default: return cat("VkResult(", int(r), ")");
  }
}

std::string version_string(uint32_t v) {
  return cat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".", VK_API_VERSION_PATCH(v));
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(cat("vulkan: ", what, " failed: ", result_name(r)));
}

}  // namespace ts::vk
