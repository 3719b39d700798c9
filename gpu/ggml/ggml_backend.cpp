#include "gpu/ggml/ggml_backend.h"

#include <unistd.h>

#include <cstdlib>

#include "gpu/ggml/mappings.h"
#include "gpu/worker_process.h"

#ifndef TS_GGML_WORKER
#define TS_GGML_WORKER ""
#endif

namespace ts {

ForeignOptions ggml_vulkan_options(const GgmlOptions& o, std::string* why_not) {
  ForeignOptions f;
  // TOUCHSTONE_GGML_WORKER: a worker built elsewhere (the GPU bundle carries one).
  const char* env = std::getenv("TOUCHSTONE_GGML_WORKER");
  const std::string worker = env && *env ? env : TS_GGML_WORKER;
  if (worker.empty()) {
    *why_not = "ggml-vulkan: this build has no ggml worker: the npm package @node-llama-cpp/linux-x64-vulkan was "
               "not installed when it was configured (run ci/setup.sh, then configure again)";
    return f;
  }
  if (access(worker.c_str(), X_OK) != 0) {
    *why_not = cat("ggml-vulkan: worker ", worker, " is missing (build the target ts_ggml_worker)");
    return f;
  }
  f.name = ggml::kLibrary;
  // ggml skips CPU devices (lavapipe) unless told which to use; told, it uses the one this run's
  // Vulkan backend picks. An abort would otherwise start gdb for a backtrace.
  // The Vulkan layer that marks loops DontUnroll on CPU devices (as for Touchstone's own kernels):
  // lavapipe otherwise spends most of a cold sweep compiling ggml's unrolled attention kernels.
  f.argv = {"/usr/bin/env", cat("GGML_VK_VISIBLE_DEVICES=", o.device), "GGML_NO_BACKTRACE=1"};
  for (std::string& e : roll_loops_env()) f.argv.push_back(std::move(e));
  f.argv.push_back(worker);
  f.mappings = {ggml::rope_llama(), ggml::rope_half(), ggml::sdpa()};
  f.timeout_ms = o.timeout_ms;
  return f;
}

std::unique_ptr<Backend> open_ggml_vulkan(const GgmlOptions& o, std::string* why_not) {
  ForeignOptions f = ggml_vulkan_options(o, why_not);
  if (f.argv.empty()) return nullptr;
  return ForeignBackend::create(std::move(f), why_not);
}

}  // namespace ts
