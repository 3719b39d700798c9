#pragma once
// The TOUCHSTONE_* environment variables, each read strictly: a value outside the set it takes is a
// usage error (exit 2, before any backend opens) naming the variable, the value and what it takes,
// never silently "off" (TOUCHSTONE_VALIDATION=yes used to mean no validation at all).
//
//   TOUCHSTONE_VALIDATION      0 or 1   the Khronos validation layer (as --validation)
//   TOUCHSTONE_PROFILE         0 or 1   time per phase on stderr at exit (core/profile.h)
//   TOUCHSTONE_CORES           1..512   the cores check plans for (tools/check_prepare.h check_cores)
//   TOUCHSTONE_KERNELS         a directory, as --kernels
//   TOUCHSTONE_NODE            the node binary of the Dawn workers (gpu/webgpu/locate.h)
//   TOUCHSTONE_WEBGPU_DIR      where node_modules/webgpu is (gpu/webgpu/locate.h)
//   TOUCHSTONE_WORKER_PROFILE  a file each Dawn worker writes its phases to (gpu/webgpu/worker.mjs)
// Unset means the default; set but empty is refused like an empty option value.
#include <optional>
#include <string>

namespace ts {

constexpr unsigned kMaxCores = 512;

// Checks every variable above that is set; UsageError on the first bad one. run_cli calls it first,
// so the readers below (and the lower layers' own getenv) see only values that passed.
void check_environment();

bool env_validation();
std::optional<unsigned> env_cores();
std::optional<std::string> env_kernels();

}  // namespace ts
