#pragma once
// The ggml-vulkan backend: llama.cpp's ggml Vulkan kernels, unmodified, from npm
// @node-llama-cpp/linux-x64-vulkan (pinned in ci/setup.sh), run by gpu/ggml/worker/ggml_worker.cpp.
#include <memory>
#include <string>

#include "gpu/foreign/foreign_backend.h"

namespace ts {

struct GgmlOptions {
  int device = 0;              // Vulkan device index (GGML_VK_VISIBLE_DEVICES)
  uint32_t timeout_ms = 120000;
};

// The backend's options (worker command line, mappings); argv empty with the reason when the worker
// was not built. Tests open it with a mapping broken on purpose.
ForeignOptions ggml_vulkan_options(const GgmlOptions& o, std::string* why_not);
// Null with the reason when the worker was not built (the npm package was not installed when the
// build was configured) or cannot start.
std::unique_ptr<Backend> open_ggml_vulkan(const GgmlOptions& o, std::string* why_not);

}  // namespace ts
