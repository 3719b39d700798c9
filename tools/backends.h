#pragma once
// Opens the GPU backends a command asks for. A backend that cannot run here is kept with the
// reason, so reports show it as UNAVAILABLE instead of leaving it out.
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "tools/args.h"

namespace ts {

struct BackendSlot {
  std::string name;
  std::unique_ptr<Backend> backend;  // null: unavailable
  std::string unavailable;           // why
  bool requested = false;            // named explicitly by the user (then unavailability is an error)
};

const std::vector<std::string>& known_backends();  // {"vulkan", "webgpu"}

struct BackendConfig {
  std::string device;      // Vulkan device selector: index or name substring ("" = default)
  bool validation = false; // Khronos validation layer (Vulkan)
  uint32_t timeout_ms = 20000;
};

// One backend by name; null with the reason when it cannot run here. Unknown names: UsageError.
std::unique_ptr<Backend> open_backend(const std::string& name, const BackendConfig& cfg, std::string* why_not);

// Reads --backend, --device, --validation, --timeout-ms from args.
std::vector<BackendSlot> open_backends(Args& args);

}  // namespace ts
