#pragma once
// A backend whose kernels are a third-party library's, unmodified (ggml's Vulkan backend, ONNX
// Runtime's WebGPU EP): every command (check, repro, shrinking, goldens, reports, --xfail) runs on it
// as on Touchstone's own kernels. The library runs in a worker process (gpu/foreign/PROTOCOL.md);
// what it can express of each operator is a Mapping. A case is
//   REJECTED     when the operator's contract rejects it, before the library sees anything (the
//                libraries assert and abort instead of rejecting: parity by validating first);
//   UNSUPPORTED  when the mapping cannot express it (a layout, a dtype, arbitrary tables, a shape
//                the library refuses), with the reason — never mapped to something else;
//   judged       otherwise, against the bound of the library's own arithmetic (Mapping::bound,
//                RunOutput::tolerance) and reported against the operator's own bound too.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace ts {

class WorkerProcess;

// One request to a worker: its operation, attributes (PROTOCOL.md's typed values), the inputs in
// the order the operation takes them, and the outputs wanted.
struct ForeignCall {
  std::string op;
  nlohmann::json attrs = nlohmann::json::object();
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::pair<std::string, DType>> outputs;
  std::vector<std::string> as_int64;  // int32 inputs the library takes as int64 (sent widened)
  nlohmann::json header = nlohmann::json::object();  // further RUN header fields (ORT: domain, opset)
  std::string ran;  // the library's operations, for reports ("SET_ROWS + FLASH_ATTN_EXT")
};

// What a mapping makes of a valid problem: a call, or why the library cannot express it.
struct Expressed {
  std::optional<ForeignCall> call;
  std::string unsupported;  // the reason, when there is no call
  std::string capability;   // what a device profile may require, when it is one ("" otherwise)

  static Expressed no(std::string why, std::string capability = "") { return {std::nullopt, std::move(why), std::move(capability)}; }
};

// One operator as a library computes it. The semantics (what matches, what differs) are written
// beside each mapping.
struct Mapping {
  std::string op;  // the operator's name
  Expressed (*express)(const Problem&);
  // The operator's outputs (names, shapes and dtypes of its contract) from what the worker returned.
  Tensors (*outputs)(const Problem&, Tensors got);
  // The library's arithmetic on this case, derived like the operator's own bound (core/op.h).
  Tolerance (*bound)(const Problem&);
};

struct ForeignOptions {
  std::string name;                      // "ggml-vulkan", "ort-webgpu"
  std::vector<std::string> argv;         // the worker's command line
  std::vector<Mapping> mappings;
  uint32_t timeout_ms = 120000;          // one request, compiles included (a library compiles on first use)
};

// Unsupported unless every tensor of the problem is a plain buffer (the libraries take no other).
std::optional<std::string> buffers_only(const Problem& p, const std::vector<std::string>& tensors, const char* library);

class ForeignBackend : public Backend {
 public:
  // Starts the worker and asks it for its device; null with the reason if it cannot run here.
  static std::unique_ptr<ForeignBackend> create(ForeignOptions o, std::string* why_not);
  ~ForeignBackend() override;

  DeviceInfo info() const override { return info_; }
  std::string_view kind() const override { return options_.name; }
  RunOutput run(const OpDef& op, const Problem& p) override;

 private:
  explicit ForeignBackend(ForeignOptions o);
  void start();  // a fresh worker, INFO answered; throws with the reason
  Tensors call(const ForeignCall& c);

  ForeignOptions options_;
  DeviceInfo info_;
  std::mutex mu_;
  std::unique_ptr<WorkerProcess> worker_;
};

}  // namespace ts
