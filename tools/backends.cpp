#include "tools/backends.h"

#include <cstdlib>

#include "core/contract.h"
#include "gpu/vulkan/vulkan_backend.h"
#ifdef TS_HAVE_WEBGPU
#include "gpu/webgpu/webgpu_backend.h"
#endif

namespace ts {

const std::vector<std::string>& known_backends() {
  static const std::vector<std::string> names = {"vulkan", "webgpu"};
  return names;
}

std::unique_ptr<Backend> open_backend(const std::string& name, const BackendConfig& cfg, std::string* why_not) {
  std::unique_ptr<Backend> b;
  if (name == "vulkan") {
    VulkanOptions o;
    o.device = cfg.device;
    o.validation = cfg.validation;
    o.timeout_ms = cfg.timeout_ms;
    b = VulkanBackend::create(o, why_not);
  } else if (name == "webgpu") {
#ifdef TS_HAVE_WEBGPU
    WebGpuOptions o;
    o.timeout_ms = cfg.timeout_ms;
    b = WebGpuBackend::create(o, why_not);
#else
    *why_not = "this build has no WebGPU backend";
#endif
  } else {
    throw UsageError(cat("unknown backend '", name, "' (known: vulkan, webgpu, all)"));
  }
  if (!b && why_not->empty()) *why_not = "not available";
  return b;
}

std::vector<BackendSlot> open_backends(Args& args) {
  std::vector<std::string> names = args.list("--backend");
  BackendConfig cfg;
  cfg.device = args.value("--device", "");
  const char* env_validation = std::getenv("TOUCHSTONE_VALIDATION");
  cfg.validation = args.flag("--validation") || (env_validation && std::string(env_validation) == "1");
  cfg.timeout_ms = uint32_t(args.integer("--timeout-ms", 20000));
  bool all = names.empty() || (names.size() == 1 && names[0] == "all");
  if (all) names = known_backends();
  std::vector<BackendSlot> slots;
  for (const std::string& n : names) {
    BackendSlot s;
    s.name = n;
    s.requested = !all;
    s.backend = open_backend(n, cfg, &s.unavailable);
    slots.push_back(std::move(s));
  }
  return slots;
}

}  // namespace ts
