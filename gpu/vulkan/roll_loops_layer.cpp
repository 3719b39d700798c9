// VK_LAYER_TOUCHSTONE_roll_loops: a Vulkan layer that the WebGPU backend enables in its Dawn
// workers. On a device that compiles at its first dispatch (a CPU device: lavapipe) every shader
// module Dawn creates goes through with_loops_rolled, as VulkanBackend's own modules do; on any
// other device, and for every other call, it hands the next layer's functions out unchanged.
// Built as its own shared library (CMake target ts_roll_loops_layer) with the manifest beside it;
// it links nothing of Touchstone but roll_loops.cpp.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "gpu/vulkan/roll_loops.h"

namespace {

// A dispatchable handle's first word is the loader's dispatch table: the same for an instance and
// its physical devices, and for a device and its queues.
void* key_of(const void* handle) { return *static_cast<void* const*>(handle); }

struct InstanceNext {
  VkInstance instance;
  PFN_vkGetInstanceProcAddr get;
  PFN_vkDestroyInstance destroy;
  PFN_vkGetPhysicalDeviceProperties properties;
};
struct DeviceNext {
  PFN_vkGetDeviceProcAddr get;
  PFN_vkDestroyDevice destroy;
  PFN_vkCreateShaderModule create_module;
  bool roll;
};

std::mutex mu;
std::unordered_map<void*, InstanceNext> instances;
std::unordered_map<void*, DeviceNext> devices;

// The entry of `handle` (a copy: the map may change once the lock is gone); `erase` removes it.
template <class Next>
std::optional<Next> next_of(std::unordered_map<void*, Next>& map, const void* handle, bool erase = false) {
  std::lock_guard lock(mu);
  auto it = map.find(key_of(handle));
  if (it == map.end()) return std::nullopt;
  Next next = it->second;
  if (erase) map.erase(it);
  return next;
}

// This layer's link in a create info's chain (the loader puts it there).
template <class Info>
Info* layer_link(const void* chain, VkStructureType type) {
  for (auto* s = static_cast<const Info*>(chain); s; s = static_cast<const Info*>(s->pNext))
    if (s->sType == type && s->function == VK_LAYER_LINK_INFO && s->u.pLayerInfo) return const_cast<Info*>(s);
  return nullptr;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* ci, const VkAllocationCallbacks* alloc,
                                              VkInstance* out) {
  auto* link = layer_link<VkLayerInstanceCreateInfo>(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr get = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;  // the next layer finds its own link
  auto create = reinterpret_cast<PFN_vkCreateInstance>(get(VK_NULL_HANDLE, "vkCreateInstance"));
  if (!create) return VK_ERROR_INITIALIZATION_FAILED;
  const VkResult r = create(ci, alloc, out);
  if (r != VK_SUCCESS) return r;
  std::lock_guard lock(mu);
  instances[key_of(*out)] = {*out, get, reinterpret_cast<PFN_vkDestroyInstance>(get(*out, "vkDestroyInstance")),
                             reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(get(*out, "vkGetPhysicalDeviceProperties"))};
  return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* alloc) {
  if (!instance) return;
  if (std::optional<InstanceNext> next = next_of(instances, instance, true)) next->destroy(instance, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo* ci,
                                            const VkAllocationCallbacks* alloc, VkDevice* out) {
  auto* link = layer_link<VkLayerDeviceCreateInfo>(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr get_instance = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  const PFN_vkGetDeviceProcAddr get = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  const std::optional<InstanceNext> found = next_of(instances, physical);
  if (!found) return VK_ERROR_INITIALIZATION_FAILED;
  const InstanceNext& inst = *found;
  auto create = reinterpret_cast<PFN_vkCreateDevice>(get_instance(inst.instance, "vkCreateDevice"));
  if (!create) return VK_ERROR_INITIALIZATION_FAILED;
  const VkResult r = create(physical, ci, alloc, out);
  if (r != VK_SUCCESS) return r;
  VkPhysicalDeviceProperties props{};
  inst.properties(physical, &props);
  std::lock_guard lock(mu);
  devices[key_of(*out)] = {get, reinterpret_cast<PFN_vkDestroyDevice>(get(*out, "vkDestroyDevice")),
                           reinterpret_cast<PFN_vkCreateShaderModule>(get(*out, "vkCreateShaderModule")),
                           props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU};
  return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* alloc) {
  if (!device) return;
  if (std::optional<DeviceNext> next = next_of(devices, device, true)) next->destroy(device, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo* ci,
                                                  const VkAllocationCallbacks* alloc, VkShaderModule* out) {
  const std::optional<DeviceNext> found = next_of(devices, device);
  if (!found) return VK_ERROR_INITIALIZATION_FAILED;
  const DeviceNext& next = *found;
  constexpr uint32_t kMagic = 0x07230203;
  if (!next.roll || ci->codeSize % 4 != 0 || ci->codeSize < 20 || ci->pCode[0] != kMagic)
    return next.create_module(device, ci, alloc, out);
  std::vector<uint32_t> code;
  try {
    code = ts::vk::with_loops_rolled(std::vector<uint32_t>(ci->pCode, ci->pCode + ci->codeSize / 4));
  } catch (...) {
    return next.create_module(device, ci, alloc, out);  // the driver reports what is wrong with it
  }
  VkShaderModuleCreateInfo rolled = *ci;
  rolled.pCode = code.data();
  return next.create_module(device, &rolled, alloc, out);
}

PFN_vkVoidFunction intercepted(const char* name) {
#define TS_HOOK(fn) \
  if (std::strcmp(name, "vk" #fn) == 0) return reinterpret_cast<PFN_vkVoidFunction>(&fn);
  TS_HOOK(CreateDevice)
  TS_HOOK(DestroyDevice)
  TS_HOOK(CreateShaderModule)
#undef TS_HOOK
  return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name);

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetInstanceProcAddr);
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetDeviceProcAddr);
  if (std::strcmp(name, "vkCreateInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&CreateInstance);
  if (std::strcmp(name, "vkDestroyInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&DestroyInstance);
  if (PFN_vkVoidFunction f = intercepted(name)) return f;
  if (!instance) return nullptr;
  const std::optional<InstanceNext> next = next_of(instances, instance);
  return next ? next->get(instance, name) : nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetDeviceProcAddr);
  if (PFN_vkVoidFunction f = intercepted(name); f && std::strcmp(name, "vkCreateDevice") != 0) return f;
  const std::optional<DeviceNext> next = next_of(devices, device);
  return next ? next->get(device, name) : nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || v->loaderLayerInterfaceVersion < 2)
    return VK_ERROR_INITIALIZATION_FAILED;
  v->loaderLayerInterfaceVersion = 2;
  v->pfnGetInstanceProcAddr = &GetInstanceProcAddr;
  v->pfnGetDeviceProcAddr = &GetDeviceProcAddr;
  v->pfnGetPhysicalDeviceProcAddr = nullptr;
  return VK_SUCCESS;
}
