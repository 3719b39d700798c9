#include "tools/environment.h"

#include <cstdlib>
#include <string_view>

#include "core/contract.h"
#include "core/errors.h"
#include "tools/options.h"

namespace ts {
namespace {

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  if (!*v) throw UsageError(cat(name, " is set but empty (unset it for the default)"));
  return std::string(v);
}

bool flag(const char* name) {
  const auto v = get(name);
  if (!v) return false;
  if (*v != "0" && *v != "1") throw UsageError(cat(name, "='", *v, "' is not one of the values it takes: 0 (off) or 1 (on)"));
  return *v == "1";
}

}  // namespace

void check_environment() {
  for (const char* name : {"TOUCHSTONE_VALIDATION", "TOUCHSTONE_PROFILE"}) flag(name);
  env_cores();
  for (const char* name : {"TOUCHSTONE_KERNELS", "TOUCHSTONE_NODE", "TOUCHSTONE_WEBGPU_DIR", "TOUCHSTONE_WORKER_PROFILE"}) get(name);
}

bool env_validation() { return flag("TOUCHSTONE_VALIDATION"); }

std::optional<unsigned> env_cores() {
  const auto v = get("TOUCHSTONE_CORES");
  if (!v) return std::nullopt;
  return unsigned(parse_integer("TOUCHSTONE_CORES", *v, 1, kMaxCores));
}

std::optional<std::string> env_kernels() { return get("TOUCHSTONE_KERNELS"); }

}  // namespace ts
