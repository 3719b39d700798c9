#include "gpu/vulkan/context.h"

#include <spirv-tools/libspirv.h>
#include <spirv_cross/spirv.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "core/contract.h"

namespace ts::vk {

const char* const kCoopmatShapes[2] = {"16x16x16:f16*f16+f32=f32", "16x16x32:s8*s8+s32=s32"};

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  const char* level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
  static_cast<std::vector<std::string>*>(user)->push_back(cat("validation ", level, ": ", data->pMessage));
  return VK_FALSE;
}

void load_loader() {
  static const VkResult loaded = volkInitialize();
  if (loaded != VK_SUCCESS)
    throw std::runtime_error("vulkan: the Vulkan loader (libvulkan.so.1) could not be loaded; install "
                             "libvulkan1 and a driver (e.g. mesa-vulkan-drivers for lavapipe)");
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// Vulkan 1.2 is the floor: the shaders are SPIR-V 1.5 and the feature queries use the 1.1/1.2 structs.
bool usable(const Adapter& a) {
  return a.props.apiVersion >= VK_API_VERSION_1_2 && a.queue_family != UINT32_MAX;
}

const char* component_name(VkComponentTypeNV t) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_NV: return "f64";
    case VK_COMPONENT_TYPE_SINT8_NV: return "s8";
    case VK_COMPONENT_TYPE_SINT16_NV: return "s16";
    case VK_COMPONENT_TYPE_SINT32_NV: return "s32";
    case VK_COMPONENT_TYPE_SINT64_NV: return "s64";
    case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
    case VK_COMPONENT_TYPE_UINT16_NV: return "u16";
    case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
    case VK_COMPONENT_TYPE_UINT64_NV: return "u64";
    default: return "?";
  }
}

// Subgroup-scope shapes only: the kernels cooperate within one subgroup.
std::vector<std::string> coopmat_shapes(VkPhysicalDevice pd) {
  if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return {};
  uint32_t n = 0;
  vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, nullptr);
  std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, props.data());
  std::vector<std::string> shapes;
  for (const auto& p : props)
    if (p.scope == VK_SCOPE_SUBGROUP_NV)
      shapes.push_back(cat(p.MSize, "x", p.NSize, "x", p.KSize, ":", component_name(p.AType), "*",
                           component_name(p.BType), "+", component_name(p.CType), "=", component_name(p.DType)));
  return shapes;
}

Adapter describe(VkPhysicalDevice pd) {
  Adapter a;
  a.handle = pd;
  vkGetPhysicalDeviceProperties(pd, &a.props);
  vkGetPhysicalDeviceMemoryProperties(pd, &a.memory);
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  for (uint32_t i = 0; i < nq; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      a.queue_family = i;
      a.timestamp_bits = families[i].timestampValidBits;
      break;
    }
  if (a.props.apiVersion < VK_API_VERSION_1_2) return a;

  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &p12};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p11};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  a.driver = cat(p12.driverName, " ", p12.driverInfo);
  a.subgroup_size = p11.subgroupSize;
  a.max_allocation = p11.maxMemoryAllocationSize;
  a.features.rte16 = p12.shaderRoundingModeRTEFloat16;

  uint32_t n_ext = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, nullptr);
  std::vector<VkExtensionProperties> exts(n_ext);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, exts.data());
  auto has_ext = [&](std::string_view name) {
    return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) { return name == e.extensionName; });
  };
  const bool has_exec = has_ext(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  const bool has_coopmat = has_ext(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  a.features.coopmat_khr_ext = has_ext("VK_KHR_cooperative_matrix");
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};

  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fexec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  if (a.props.apiVersion >= VK_API_VERSION_1_3) f12.pNext = &f13;
  if (has_exec) fexec.pNext = f2.pNext, f2.pNext = &fexec;
  if (has_coopmat) fcoop.pNext = f2.pNext, f2.pNext = &fcoop;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (has_coopmat && fcoop.cooperativeMatrix) a.features.coopmat_shapes = coopmat_shapes(pd);
  a.features.coopmat_nv = std::all_of(std::begin(kCoopmatShapes), std::end(kCoopmatShapes), [&](const char* k) {
    const auto& all = a.features.coopmat_shapes;
    return std::find(all.begin(), all.end(), k) != all.end();
  });
  a.features.exec_stats = has_exec && fexec.pipelineExecutableInfo;
  Features& f = a.features;
  f.storage16 = f11.storageBuffer16BitAccess;
  f.storage8 = f12.storageBuffer8BitAccess;
  f.float16 = f12.shaderFloat16;
  f.int8 = f12.shaderInt8;
  f.int16 = f2.features.shaderInt16;
  f.int_dot = f13.shaderIntegerDotProduct;
  f.float64 = f2.features.shaderFloat64;
  f.int64 = f2.features.shaderInt64;
  f.memory_model = f12.vulkanMemoryModel;
  f.coopmat_nv = f.coopmat_nv && f.memory_model;  // the kernels' SPIR-V declares both
  if (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) f.subgroup_ops = p11.subgroupSupportedOperations;
  return a;
}

}  // namespace

Instance::Instance(bool validation) {
  load_loader();
  std::vector<const char*> layers, extensions;
  if (validation) {
    if (!has_layer(kValidationLayer))
      throw std::runtime_error(cat("vulkan: validation was requested but ", kValidationLayer,
                                   " is not installed (Debian: vulkan-validationlayers)"));
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  // Chained into the instance create info as well, so messages about instance creation and
  // destruction are caught, not only those between messenger creation and destruction.
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = on_message;
  messenger.pUserData = messages_.get();

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "touchstone";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pNext = validation ? &messenger : nullptr;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw std::runtime_error("vulkan: no Vulkan driver is installed (VK_ERROR_INCOMPATIBLE_DRIVER); "
                             "e.g. mesa-vulkan-drivers provides lavapipe");
  check(r, "vkCreateInstance");
  volkLoadInstanceOnly(instance_);
  if (validation) {
    destroy_messenger_ = vkDestroyDebugUtilsMessengerEXT;
    r = vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_);
    if (r != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      check(r, "vkCreateDebugUtilsMessengerEXT");
    }
  }
}

Instance::~Instance() {
  if (messenger_) destroy_messenger_(instance_, messenger_, nullptr);
  vkDestroyInstance(instance_, nullptr);
}

std::string Adapter::describe() const {
  std::string s = cat(props.deviceName, " [", type_name(props.deviceType), ", Vulkan ",
                      version_string(props.apiVersion));
  if (props.apiVersion < VK_API_VERSION_1_2) s += ", unusable: needs Vulkan 1.2";
  else if (queue_family == UINT32_MAX) s += ", unusable: no compute queue";
  return s + "]";
}

namespace {

// The SPIR-V capabilities the backend knows how to check against a device, and how. Anything else a
// kernel declares is refused (UNSUPPORTED, naming it) before a pipeline exists: passing an unchecked
// capability on to the driver ends as a validation error, an ERROR, or a lost device, never as the
// honest verdict that this device cannot run the kernel.
struct KnownCapability {
  uint32_t id;
  const char* name;     // as SPIR-V spells it
  const char* feature;  // the device feature it needs; nullptr: every Vulkan 1.2 device has it
  bool (*has)(const Features&);
  const char* word = "";  // the word VulkanBackend::info() lists when the device has it
};

#define TS_FEATURE(field) [](const Features& f) { return bool(f.field); }
#define TS_SUBGROUP(bit) [](const Features& f) { return (f.subgroup_ops & (bit)) != 0; }
const KnownCapability kKnown[] = {
    {SpvCapabilityShader, "Shader", nullptr, nullptr},
    {SpvCapabilityMatrix, "Matrix", nullptr, nullptr},
    {SpvCapabilityFloat16, "Float16", "shaderFloat16", TS_FEATURE(float16), "shader-f16"},
    {SpvCapabilityFloat64, "Float64", "shaderFloat64", TS_FEATURE(float64), "shader-f64"},
    {SpvCapabilityInt8, "Int8", "shaderInt8", TS_FEATURE(int8), "int8"},
    {SpvCapabilityInt16, "Int16", "shaderInt16", TS_FEATURE(int16), "int16"},
    {SpvCapabilityInt64, "Int64", "shaderInt64", TS_FEATURE(int64), "int64"},
    {SpvCapabilityStorageBuffer16BitAccess, "StorageBuffer16BitAccess", "storageBuffer16BitAccess",
     TS_FEATURE(storage16), "bfloat16"},
    {SpvCapabilityStorageBuffer8BitAccess, "StorageBuffer8BitAccess", "storageBuffer8BitAccess",
     TS_FEATURE(storage8), "int8"},
    // Declared only with the execution mode RoundingModeRTE for 16-bit floats (gpu/vulkan/accessors.cpp).
    {SpvCapabilityRoundingModeRTE, "RoundingModeRTE", "shaderRoundingModeRTEFloat16", TS_FEATURE(rte16), "f16-rte"},
    {SpvCapabilityDotProduct, "DotProduct", "shaderIntegerDotProduct", TS_FEATURE(int_dot), "int8-dot-product"},
    {SpvCapabilityDotProductInputAll, "DotProductInputAll", "shaderIntegerDotProduct",
     TS_FEATURE(int_dot), "int8-dot-product"},
    {SpvCapabilityDotProductInput4x8Bit, "DotProductInput4x8Bit", "shaderIntegerDotProduct",
     TS_FEATURE(int_dot), "int8-dot-product"},
    {SpvCapabilityDotProductInput4x8BitPacked, "DotProductInput4x8BitPacked", "shaderIntegerDotProduct",
     TS_FEATURE(int_dot), "int8-dot-product"},
    // glslang declares it for GL_NV_cooperative_matrix (SPV_NV_cooperative_matrix requires the model).
    {SpvCapabilityVulkanMemoryModel, "VulkanMemoryModel", "vulkanMemoryModel", TS_FEATURE(memory_model),
     "vulkan-memory-model"},
    {SpvCapabilityCooperativeMatrixNV, "CooperativeMatrixNV",
     "VK_NV_cooperative_matrix with shapes 16x16x16 f16*f16+f32 and 16x16x32 s8*s8+s32", TS_FEATURE(coopmat_nv),
     "cooperative-matrix"},
    {SpvCapabilityGroupNonUniform, "GroupNonUniform", "subgroup basic ops",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_BASIC_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformVote, "GroupNonUniformVote", "subgroup vote",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_VOTE_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformArithmetic, "GroupNonUniformArithmetic", "subgroup arithmetic",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformBallot, "GroupNonUniformBallot", "subgroup ballot",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_BALLOT_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformShuffle, "GroupNonUniformShuffle", "subgroup shuffle",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_SHUFFLE_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformShuffleRelative, "GroupNonUniformShuffleRelative", "subgroup relative shuffle",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformClustered, "GroupNonUniformClustered", "subgroup clustered ops",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_CLUSTERED_BIT), "subgroups"},
    {SpvCapabilityGroupNonUniformQuad, "GroupNonUniformQuad", "subgroup quad ops",
     TS_SUBGROUP(VK_SUBGROUP_FEATURE_QUAD_BIT), "subgroups"},
};
#undef TS_FEATURE
#undef TS_SUBGROUP

}  // namespace

std::string capability_name(uint32_t capability) {
  for (const KnownCapability& k : kKnown)
    if (k.id == capability) return k.name;
  // SPIRV-Tools' disassembler knows every name: ask it about a module of one OpCapability.
  const uint32_t module[] = {SpvMagicNumber, 0x00010500, 0, 1, 0, (2u << 16) | SpvOpCapability, capability};
  std::string name;
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_5);
  spv_text text = nullptr;
  if (spvBinaryToText(ctx, module, std::size(module), SPV_BINARY_TO_TEXT_OPTION_NO_HEADER, &text, nullptr) ==
      SPV_SUCCESS) {
    std::string line(text->str, text->length);
    const std::string op = "OpCapability ";
    if (size_t at = line.find(op); at != std::string::npos) name = line.substr(at + op.size());
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  }
  spvTextDestroy(text);
  spvContextDestroy(ctx);
  bool numeric = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return name.empty() || numeric ? cat("capability ", capability) : name;
}

std::string Adapter::missing_for(uint32_t capability, std::string* word) const {
  for (const KnownCapability& k : kKnown) {
    if (k.id != capability) continue;
    if (!k.has || k.has(features)) return {};
    if (word) *word = k.word;
    return cat("needs SPIR-V capability ", k.name, " (", k.feature, "), which ", props.deviceName, " lacks");
  }
  return cat("declares SPIR-V capability ", capability_name(capability), " (", capability,
             "), which the vulkan backend cannot check against device features (not on its allowlist, "
             "gpu/vulkan/context.cpp)");
}

std::vector<Adapter> adapters(const Instance& instance) {
  uint32_t n = 0;
  check(vkEnumeratePhysicalDevices(instance.handle(), &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> pds(n);
  check(vkEnumeratePhysicalDevices(instance.handle(), &n, pds.data()), "vkEnumeratePhysicalDevices");
  if (pds.empty())
    throw std::runtime_error("vulkan: the loader found no Vulkan device (install a driver, e.g. "
                             "mesa-vulkan-drivers for lavapipe)");
  std::vector<Adapter> all;
  for (VkPhysicalDevice pd : pds) all.push_back(describe(pd));
  return all;
}

std::vector<std::string> numbered(const std::vector<Adapter>& all) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < all.size(); ++i) lines.push_back(cat(i, ": ", all[i].describe()));
  return lines;
}

Adapter select_adapter(const Instance& instance, const std::string& selector) {
  std::vector<Adapter> all = adapters(instance);
  auto first = [&](auto pred) -> const Adapter* {
    for (const Adapter& a : all)
      if (usable(a) && pred(a)) return &a;
    return nullptr;
  };
  const Adapter* pick = nullptr;
  if (selector.empty()) {
    pick = first([](const Adapter& a) {
      return a.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
             a.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
    });
    if (!pick) pick = first([](const Adapter& a) { return a.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; });
    if (!pick) pick = first([](const Adapter&) { return true; });
  } else if (std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    size_t i = std::stoul(selector);
    if (i < all.size() && usable(all[i])) pick = &all[i];
  } else {
    std::string want = lower(selector);
    pick = first([&](const Adapter& a) { return lower(a.props.deviceName).find(want) != std::string::npos; });
  }
  if (!pick) {
    std::string what = selector.empty() ? "no usable Vulkan device" : cat("no usable Vulkan device matches '", selector, "'");
    std::string found;
    for (const std::string& line : numbered(all)) found += (found.empty() ? "" : "; ") + line;
    throw std::runtime_error(cat("vulkan: ", what, "; found: ", found));
  }
  return *pick;
}

Device::Device(Adapter a) : adapter(std::move(a)) {
  const Features& want = adapter.features;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_ci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_ci.queueFamilyIndex = adapter.queue_family;
  queue_ci.queueCount = 1;
  queue_ci.pQueuePriorities = &priority;

  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.shaderIntegerDotProduct = want.int_dot;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.shaderFloat16 = want.float16;
  f12.shaderInt8 = want.int8;
  f12.storageBuffer8BitAccess = want.storage8;
  f12.vulkanMemoryModel = want.memory_model;
  if (adapter.props.apiVersion >= VK_API_VERSION_1_3) f12.pNext = &f13;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  f11.storageBuffer16BitAccess = want.storage16;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fexec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, f2.pNext};
  fexec.pipelineExecutableInfo = VK_TRUE;
  const char* exec_ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  if (want.exec_stats) f2.pNext = &fexec;
  // robustBufferAccess stays off on purpose: an out-of-bounds write must reach the guard bands.
  f2.features.shaderInt16 = want.int16;
  f2.features.shaderFloat64 = want.float64;
  f2.features.shaderInt64 = want.int64;

  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &queue_ci;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                    f2.pNext};
  fcoop.cooperativeMatrix = VK_TRUE;
  if (want.coopmat_nv) f2.pNext = &fcoop;
  std::vector<const char*> exts;
  if (want.exec_stats) exts.push_back(exec_ext);
  if (want.coopmat_nv) exts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  ci.enabledExtensionCount = uint32_t(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  check(vkCreateDevice(adapter.handle, &ci, nullptr, &handle), "vkCreateDevice");
  volkLoadDeviceTable(&fn, handle);
  fn.vkGetDeviceQueue(handle, adapter.queue_family, 0, &queue);
}

// Owners never destroy a device with work in flight (a hung kernel's device is leaked instead).
Device::~Device() { destroy(); }

void Device::destroy(CaseContext& c) const {
  fn.vkDestroyDescriptorPool(handle, c.descriptors, nullptr);
  fn.vkDestroyFence(handle, c.fence, nullptr);
  fn.vkDestroyCommandPool(handle, c.pool, nullptr);  // frees cmd
}

void Device::destroy() {
  for (auto& c : contexts_) destroy(*c);
  fn.vkDestroyDevice(handle, nullptr);
}

CaseContext& Device::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      CaseContext* c = idle_.back();
      idle_.pop_back();
      return *c;
    }
  }
  auto c = std::make_unique<CaseContext>();
  try {
    VkCommandPoolCreateInfo pool_ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_ci.queueFamilyIndex = adapter.queue_family;
    check(fn.vkCreateCommandPool(handle, &pool_ci, nullptr, &c->pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cmd_ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, c->pool,
                                       VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    check(fn.vkAllocateCommandBuffers(handle, &cmd_ai, &c->cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence_ci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(fn.vkCreateFence(handle, &fence_ci, nullptr, &c->fence), "vkCreateFence");
  } catch (...) {
    destroy(*c);
    throw;
  }
  std::lock_guard lock(mu_);
  contexts_.push_back(std::move(c));
  return *contexts_.back();
}

void Device::release(CaseContext& c) {
  std::lock_guard lock(mu_);
  idle_.push_back(&c);
}

VkResult Device::submit(VkCommandBuffer cmd, VkFence fence, uint64_t& seq) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  std::lock_guard lock(mu_);
  VkResult r = fn.vkQueueSubmit(queue, 1, &si, fence);
  seq = next_seq_++;
  if (r == VK_SUCCESS) in_flight_.insert(seq);
  return r;
}

bool Device::earlier_in_flight(uint64_t seq) const {
  std::lock_guard lock(mu_);
  return !in_flight_.empty() && *in_flight_.begin() < seq;
}

void Device::done(uint64_t seq) {
  std::lock_guard lock(mu_);
  in_flight_.erase(seq);
}

VkDescriptorPool Device::descriptor_pool(CaseContext& c, uint32_t sets, uint32_t buffers, uint32_t images) {
  if (c.descriptors && sets <= c.sets && buffers <= c.buffers && images <= c.images) {
    check(fn.vkResetDescriptorPool(handle, c.descriptors, 0), "vkResetDescriptorPool");
    return c.descriptors;
  }
  fn.vkDestroyDescriptorPool(handle, c.descriptors, nullptr);
  c.descriptors = VK_NULL_HANDLE;
  // Grown geometrically, so that a sweep's growing plans recreate it only a few times.
  c.sets = std::max({sets, 2 * c.sets, 16u});
  c.buffers = std::max({buffers, 2 * c.buffers, 64u});
  c.images = std::max({images, 2 * c.images, 64u});
  VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, c.buffers},
                                  {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, c.images}};
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.maxSets = c.sets;
  ci.poolSizeCount = 2;
  ci.pPoolSizes = sizes;
  check(fn.vkCreateDescriptorPool(handle, &ci, nullptr, &c.descriptors), "vkCreateDescriptorPool");
  return c.descriptors;
}

}  // namespace ts::vk
