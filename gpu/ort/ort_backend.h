#pragma once
// The ort-webgpu backend: ONNX Runtime's WebGPU execution provider, unmodified, from npm
// onnxruntime-node (pinned by gpu/ort/package-lock.json), run by gpu/ort/worker.mjs.
#include <memory>
#include <string>

#include "gpu/foreign/foreign_backend.h"

namespace ts {

struct OrtOptions {
  std::string node;  // the node executable ("" = TOUCHSTONE_NODE or PATH)
  uint32_t timeout_ms = 120000;
};

// The backend's options; argv empty with the reason when it cannot run here (tests break a mapping).
ForeignOptions ort_webgpu_options(const OrtOptions& o, std::string* why_not);
// Null with the reason when Node, the package or a WebGPU adapter is missing.
std::unique_ptr<Backend> open_ort_webgpu(const OrtOptions& o, std::string* why_not);

}  // namespace ts
