#include "gpu/ort/ort_backend.h"

#include <cstdlib>
#include <filesystem>

#include "gpu/ort/mappings.h"
#include "gpu/worker_process.h"
#include "gpu/node.h"

#ifndef TS_ORT_DIR
#define TS_ORT_DIR ""
#endif

namespace ts {

namespace fs = std::filesystem;

ForeignOptions ort_webgpu_options(const OrtOptions& o, std::string* why_not) {
  ForeignOptions f;
  const std::string node = find_node(o.node, why_not);
  if (node.empty()) {
    *why_not = "ort-webgpu: " + *why_not;
    return f;
  }
  // The worker's node_modules: in the binary's source tree (TS_ORT_DIR), or where TOUCHSTONE_ORT_DIR
  // says (the GPU bundle). The worker itself is embedded (node_worker_argv).
  const char* env = std::getenv("TOUCHSTONE_ORT_DIR");
  const fs::path dir = env && *env ? fs::path(env) : fs::path(TS_ORT_DIR);
  std::error_code ec;
  if (!fs::is_regular_file(dir / "node_modules" / "onnxruntime-node" / "package.json", ec)) {
    *why_not = cat("ort-webgpu: npm package 'onnxruntime-node' not found in ", dir.string(), "/node_modules: run ci/setup.sh");
    return f;
  }
  f.name = ort::kLibrary;
  // ORT's Dawn creates its own Vulkan instance: the loop-rolling layer reaches it through the loader.
  f.argv = {"/usr/bin/env"};
  for (std::string& e : roll_loops_env()) f.argv.push_back(std::move(e));
  for (std::string& a : node_worker_argv(node, "gpu/ort/worker.mjs", {dir.string()})) f.argv.push_back(std::move(a));
  f.mappings = {ort::rope_llama(), ort::rope_half(), ort::sdpa()};
  f.timeout_ms = o.timeout_ms;
  return f;
}

std::unique_ptr<Backend> open_ort_webgpu(const OrtOptions& o, std::string* why_not) {
  ForeignOptions f = ort_webgpu_options(o, why_not);
  if (f.argv.empty()) return nullptr;
  return ForeignBackend::create(std::move(f), why_not);
}

}  // namespace ts
