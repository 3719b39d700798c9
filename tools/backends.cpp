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

std::vector<BackendSlot> open_backends(Args& args) {
  std::vector<std::string> names = args.list("--backend");
  std::string device = args.value("--device", "");
  const char* env_validation = std::getenv("TOUCHSTONE_VALIDATION");
  bool validation = args.flag("--validation") || (env_validation && std::string(env_validation) == "1");
  uint32_t timeout_ms = uint32_t(args.integer("--timeout-ms", 20000));
  bool all = names.empty() || (names.size() == 1 && names[0] == "all");
  if (all) names = known_backends();
  std::vector<BackendSlot> slots;
  for (const std::string& n : names) {
    BackendSlot s;
    s.name = n;
    s.requested = !all;
    if (n == "vulkan") {
      VulkanOptions o;
      o.device = device;
      o.validation = validation;
      o.timeout_ms = timeout_ms;
      s.backend = VulkanBackend::create(o, &s.unavailable);
    } else if (n == "webgpu") {
#ifdef TS_HAVE_WEBGPU
      WebGpuOptions o;
      o.timeout_ms = timeout_ms;
      s.backend = WebGpuBackend::create(o, &s.unavailable);
#else
      s.unavailable = "this build has no WebGPU backend";
#endif
    } else {
      throw UsageError(cat("unknown backend '", n, "' (known: vulkan, webgpu, all)"));
    }
    if (!s.backend && s.unavailable.empty()) s.unavailable = "not available";
    slots.push_back(std::move(s));
  }
  return slots;
}

}  // namespace ts
