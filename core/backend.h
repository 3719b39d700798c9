#pragma once
// A backend runs an operator's problem and returns what the device wrote. It validates the
// contract itself (the reference's rules, the same ids) and its own device limits before it
// allocates anything; the counters let tests prove that a rejected case touched nothing.
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/op.h"

namespace ts {

struct GuardReport {
  int64_t bad_bytes = 0;     // guard bytes that changed: a write outside the tensor
  int64_t first_offset = 0;  // byte offset from the tensor start of the first changed guard byte (<0: before)
  int64_t bad_padding = 0;     // padding lanes of a packed layout (core/layout.h) that are not zero
  int64_t first_bad_texel = -1;
};

// A scratch buffer (BufferSpec::Role::scratch, e.g. attention scores) after the run. It has no reference
// to compare with, but it is poisoned and guarded like an output, and every element must have been
// written by the first dispatch that binds it (nothing else initialises scratch): an element still
// holding the poison pattern right after that dispatch was never written. Float scratch only: the
// integer sentinels are legal values.
struct ScratchReport {
  Shape shape;
  DType dtype = DType::f32;
  std::string first_kernel;      // the first dispatch that binds it ("" if none does)
  int64_t unwritten = 0;         // elements still poison after first_kernel (float scratch)
  int64_t first_unwritten = -1;  // flat index of the first of them
};

struct RunOutput {
  enum class Status { ok, rejected, unsupported, error };
  Status status = Status::ok;
  Violation violation;                  // rejected
  std::string message;                  // unsupported / error
  // unsupported: the DeviceInfo::capabilities word the device lacks for this case (shader-f16,
  // bfloat16, int8, int8-dot-product, subgroups, texture3d:rgba16float, ...), which a device
  // profile can require (check --expect); "" when the case passes a limit instead (a shape too large).
  std::string capability;
  Tensors outputs;                      // ok: logical layout, the buffer's dtype
  std::map<std::string, GuardReport> guards;   // outputs and scratch
  std::map<std::string, ScratchReport> scratch;
  // Integer outputs, whose poison is a legal value (SPEC "Layouts": two sentinels): 1 where the
  // element held the first sentinel after one run and the second after a rerun — never written.
  // Absent for an output that held no first sentinel anywhere (no rerun was needed).
  std::map<std::string, std::vector<uint8_t>> unwritten;
  // A foreign backend (a third-party library's kernels, gpu/foreign/foreign_backend.h): the bound of
  // that library's own arithmetic on this case, derived beside its mapping with the reasoning, which
  // judges the outputs in place of the operator's (the operator's own bound is still reported:
  // CaseResult::worst_own). Unset for Touchstone's kernels.
  std::optional<Tolerance> tolerance;
  std::string ran;  // a foreign backend: the library operations that ran ("" = the operator's plan)
};

struct DeviceInfo {
  std::string backend;                   // "vulkan", "webgpu", "reference"
  std::string name;                      // e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::vector<std::string> capabilities;  // e.g. "shader-f16", "subgroup-size=8", "max-workgroups=65535"
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo info() const = 0;
  // "vulkan", "webgpu": what judge() stamps on every result, without building info() per case.
  virtual std::string_view kind() const = 0;
  virtual RunOutput run(const OpDef& op, const Problem& p) = 0;
  // A hint that run(op, p) comes soon: a backend may start compiling its kernels in the background
  // (on a GPU driver a pipeline takes ~0.1 s, most of a sweep's time). Called from the thread that
  // calls run(); never fails (a kernel that does not compile reports itself in run()).
  virtual void warm(const OpDef& op, const Problem& p) {}
  // How many threads may call run() and warm() at once (check runs that many lanes on it); 1: one
  // thread at a time.
  virtual unsigned concurrency() const { return 1; }

  // Incremented by implementations on every device allocation / dispatch.
  std::atomic<uint64_t> allocations = 0;
  std::atomic<uint64_t> dispatches = 0;
  // Pipelines (a kernel for one dtype, layouts and workgroup size) that runs needed: new ones were
  // built for them, the compile a cold sweep spends its time on; reused ones ran before.
  std::atomic<uint64_t> pipelines_new = 0;
  std::atomic<uint64_t> pipelines_reused = 0;
};

}  // namespace ts
