#pragma once
// Opens the GPU backends a command asks for. A backend that cannot run here is kept with the
// reason, so reports show it as UNAVAILABLE instead of leaving it out.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "tools/options.h"

namespace ts {

struct BackendSlot {
  std::string name;
  std::unique_ptr<Backend> backend;  // null: unavailable
  std::string unavailable;           // why
  bool requested = false;            // named explicitly by the user (then unavailability is an error)
};

const std::vector<std::string>& known_backends();   // every backend: kernel_backends(), then the foreign ones
const std::vector<std::string>& kernel_backends();  // those that run Touchstone's kernels: {"vulkan", "webgpu"}

using BackendConfig = BackendOptions;  // the name tests use for a backend's settings

// The backends `o` names (every known one for none or "all"), in known_backends() order when
// none is named; with --kernels or own_kernels, kernel_backends() (a foreign one named: UsageError).
// Unknown names, or "all" beside another name: UsageError. Opening nothing.
std::vector<std::string> backend_names(const BackendOptions& o);

// One backend by name; null with the reason when it cannot run here. Unknown names: UsageError.
std::unique_ptr<Backend> open_backend(const std::string& name, const BackendOptions& o, std::string* why_not);

// Every backend `o` names; an explicitly named one is `requested`.
std::vector<BackendSlot> open_backends(const BackendOptions& o);

// Prints "backend NAME DEVICE" or "backend NAME UNAVAILABLE: why" per slot; returns the
// exit code when the set cannot run a command: 2 (with a message) when a requested backend is
// unavailable or none is usable, else 0.
int report_backends(const std::vector<BackendSlot>& slots, const char* none_hint = "");

// "kernels: DIR (<kernel>.comp, ...)" when --kernels replaced built-in kernels; nothing otherwise.
void print_kernels(const KernelDir& kernels);
// The run's replaced kernels for a JSON report: null, or {"dir", "files": [{"kernel", "file"}]}.
nlohmann::json kernels_json(const KernelDir& kernels);

}  // namespace ts
