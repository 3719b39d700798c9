#pragma once
// The device-neutral half of a GPU backend, written once for Vulkan and WebGPU:
// validate -> device limits -> poison + guard bands -> execute -> read back -> guard check.
// A concrete backend supplies only the primitives below.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/poison.h"
#include "gpu/kernel_source.h"

namespace ts {

// What the device reports (1-D folding and workgroup clamping use these).
struct DeviceLimits {
  uint32_t max_workgroups[3] = {65535, 65535, 65535};
  uint32_t max_workgroup_size_x = 256;
  uint32_t max_invocations = 256;
  uint64_t max_buffer_bytes = 128ull << 20;  // largest single binding
  bool f16 = false;                          // 16-bit storage + float16 arithmetic usable by kernels
  bool bf16 = false;                         // the backend's kernels take bfloat16 (16-bit words converted in the accessors)
  uint32_t max_image_3d = 256;               // maxImageDimension3D: the largest texture3d extent
  // Packed 4x8-bit integer dot product usable by kernels (Vulkan VK_KHR_shader_integer_dot_product,
  // WGSL dot4I8Packed), and allowed by the backend's options: GpuBackend::run then adds the define
  // TS_INT_DOT=1 to every dispatch, and int8 kernels take their dot-product path.
  bool int_dot = false;
  // The smallest subgroup a compute kernel may run in, where kernels may shuffle within subgroups
  // (0: they may not). Dispatch::subgroup is checked against it.
  uint32_t subgroup = 0;
  // The largest subgroup a kernel may run in, where that may vary from one to another (WebGPU's
  // subgroupMaxSize); 0: every kernel runs in subgroups of `subgroup` (Vulkan, SPIR-V 1.5).
  uint32_t subgroup_max = 0;
  // Why kernels that multiply on cooperative matrices (tensor cores; Dispatch::cooperative_matrix)
  // cannot run here, naming what is missing; "" where they can.
  std::string no_coopmat = "the backend offers no cooperative matrices";
};

// A host copy of one device buffer or image: [guard][data][guard] for buffer outputs and scratch,
// [data] for inputs and for images (the API discards out-of-range image writes: no guard bands).
// `bytes` holds the initial contents on the way in and what the device holds on the way out, in the
// tensor's physical layout (core/layout.h: texels x fastest, 4 lanes each, for images).
struct HostBuffer {
  std::string name;
  Physical phys;      // layout, [N,C,H,W] dims (kernels' accessors read them: gpu/ACCESSORS.md), extents
  DType dtype = DType::f32;
  bool image() const { return is_texture(phys.layout); }
  size_t offset = 0;  // where the tensor's data starts (the binding offset)
  size_t size = 0;    // the binding range: the tensor's bytes, and for outputs the trailing guard too,
                      // since lavapipe and WebGPU drop writes outside the range instead of making them
                      // visible: inside the range, a write past the end lands in the guard and is seen
  bool read_back = false;
  std::vector<uint8_t> bytes;
  // Spans the device fills itself before the plan runs (guard bands, poison), so that their bytes
  // never cross from the host: `word` repeated over [offset, offset + size), both multiples of 4.
  // `bytes` keeps the buffer's full size (what is read back lands there), but inside a fill its
  // contents are not uploaded (and not written by the host: unspecified until read back).
  struct Fill {
    size_t offset = 0, size = 0;
    uint32_t word = 0;
  };
  std::vector<Fill> fills;  // ascending, disjoint; buffers only (never images)
  // The spans of `bytes` that are uploaded: everything outside `fills`, in order.
  std::vector<std::pair<size_t, size_t>> uploads() const;
  // A buffer wholly of the device's filling that nothing reads back (bench's copy and scrub, up to
  // a binding's limit): `bytes` is left empty, so that no host or staging memory of its size is
  // taken, and the fills' end is its size.
  bool device_only() const { return bytes.empty() && !fills.empty(); }
  size_t device_bytes() const { return device_only() ? fills.back().offset + fills.back().size : bytes.size(); }
  // Scratch: the backend also returns the buffer as it was right after the first dispatch that
  // binds it (in `first_use`, same layout as `bytes`, and that dispatch's kernel in `first_kernel`).
  // Later dispatches may rewrite scratch in place (a softmax over scores), which would smear an unwritten
  // element over its neighbours (NaN in, NaN out) or hide it (NaN payloads are not kept on every
  // GPU): only the first writer's result says which elements were never written.
  bool snapshot = false;
  std::vector<uint8_t> first_use;  // empty when no dispatch binds the buffer
  std::string first_kernel;
};

// Thrown by primitives for what the device cannot do (-> UNSUPPORTED, never PASS). `capability`:
// the DeviceInfo::capabilities word it lacks (RunOutput::capability), "" for a limit past which a
// case does not fit (an extent over maxImageDimension3D, a binding over the largest).
struct Unsupported : std::runtime_error {
  Unsupported(std::string capability, const std::string& what)
      : std::runtime_error(what), capability(std::move(capability)) {}
  std::string capability;
};

// Why the device cannot run a dispatch's subgroup operations (Dispatch::subgroup, whole_subgroups),
// naming both sizes; "" where it can.
std::string subgroup_gap(const Dispatch& d, const DeviceLimits& lim);

// A 1-D grid folded into the device's per-dimension workgroup limit.
struct Grid {
  uint32_t workgroup_size = 1;
  uint32_t groups[3] = {1, 1, 1};
};
std::optional<Grid> fold_grid(uint64_t invocations, uint32_t workgroup_size, const DeviceLimits& lim);
// The grid of a dispatch: its own workgroup size if it asks for one (exactly: nullopt if the device
// cannot), else `dflt` clamped to the device.
std::optional<Grid> dispatch_grid(const Dispatch& d, uint32_t dflt, const DeviceLimits& lim);

// The tensor a kernel's storage array binds: Dispatch::bind's mapping if any, else the array's own
// name without one trailing '_' (kernels write out_, cos_, sin_ where GLSL/WGSL reserve the word).
std::string bound_tensor(const Dispatch& d, const std::string& array_name);

// How long bench() times one dispatch chain: `warmup` untimed repetitions, then timed ones until
// at least `min_reps` ran and `max_seconds` of wall time passed, or `max_reps` ran.
struct TimingBudget {
  uint32_t warmup = 3;
  // And untimed repetitions go on until this much time has passed: a GPU at rest runs at a fraction
  // of its clock for a while, which a count of warm-up repetitions of a short kernel never outlasts;
  // timed at once, the same kernel measured several times apart from run to run (PERFORMANCE.md).
  double warmup_seconds = 0;
  uint32_t min_reps = 5;
  uint32_t max_reps = 1000;
  double max_seconds = 0.5;
  // Dispatch chains per timed interval: an interval runs the case's chain this many times back to
  // back (with the barriers between them that one chain has between its dispatches) and counts as
  // one repetition of its time / stream (GpuBackend::timed divides; a backend times whole intervals).
  // 1 times each chain alone; more times it the way a model runs it, in a stream, where a backend's
  // fixed cost around each interval (Dawn's timestamped pass and the wait before its first dispatch,
  // a dispatch's launch) is shared.
  uint32_t stream = 1;
  // > 0: before each timed interval, and outside it, the device overwrites a buffer of this many
  // bytes (at most one binding's; bench_scrub) and finishes doing so, so that the interval finds none
  // of the case's tensors in the GPU's caches (what a kernel meets in a model, where other layers'
  // tensors pass through the cache in between). 0: repetitions follow each other, and a working set
  // that fits the last-level cache is partly read from there.
  uint64_t cold_bytes = 0;
  // Each interval opens with a one-texel dispatch (bench_scrub, on a buffer of its own: the primer),
  // and the median and minimum of the primer timed alone, the same way, are taken off the chain's. So
  // the primer, not the chain, meets what a timed interval's first dispatch waits for (Dawn: several
  // microseconds that no later dispatch of the pass waits; PERFORMANCE.md), and the time is what the
  // chain adds to a queue of work: its barriers, launches and kernels. With stream 1 only.
  bool primed = false;
  // Set by GpuBackend::timed, not by callers: the plan's first `untimed` dispatches run before each
  // interval, outside it, and the interval starts once they are done (cold_bytes' overwrite). A backend
  // records them ahead of each repetition and times the rest.
  uint32_t untimed = 0;
};

// What a driver says it compiled for one dispatch of a timed plan (Vulkan:
// VK_KHR_pipeline_executable_properties), e.g. {"Register Count", "64"}, in the driver's order.
struct KernelStatistics {
  std::string kernel;  // Dispatch::kernel
  std::vector<std::pair<std::string, std::string>> values;
};

// What a backend's time_plan measured: the seconds of each timed repetition, and the compiled
// kernels' statistics where it has them (else why not).
struct PlanTiming {
  std::vector<double> seconds;
  std::vector<KernelStatistics> kernels;
  std::string no_kernel_statistics;
};

// Device time of one dispatch chain (a case's whole plan), from GPU timestamps around it.
struct BenchTiming {
  RunOutput::Status status = RunOutput::Status::ok;  // not ok: nothing was timed (message says why)
  std::string message;
  std::vector<double> seconds;  // one per timed repetition, in order (TimingBudget::primed: the primer's included)
  double median = 0, min = 0;   // primed: each less the primer's own, timed alone
  std::vector<KernelStatistics> kernels;  // one per dispatch, when the backend reports them
  std::string no_kernel_statistics;       // why `kernels` is empty
  uint64_t cold_bytes = 0;                // what was overwritten before each interval (TimingBudget::cold_bytes, lowered)
  double primer_median = 0;               // TimingBudget::primed: the primer's median alone (s); 0 unprimed
};

class GpuBackend : public Backend {
 public:
  static constexpr size_t kGuardBytes = 256;  // also a multiple of every min storage offset alignment
  // An output's trailing guard is as long as the output, up to this (gpu_backend.cpp trailing_guard).
  static constexpr size_t kMaxTrailingGuard = size_t(1) << 20;

  // kernel_ext: the backend's kernel language, ".comp" or ".wgsl" (gpu/kernel_source.h).
  explicit GpuBackend(std::string kernel_ext) : kernels_(std::move(kernel_ext)) {}

  RunOutput run(const OpDef& op, const Problem& p) final;
  void warm(const OpDef& op, const Problem& p) final;
  // Times the case's plan on the device (`touchstone bench`). The buffers are those run() makes,
  // poisoned and guarded the same way, but nothing is compared: the caller judges the case with
  // run() first, so a wrong kernel is never timed as a win.
  BenchTiming bench(const OpDef& op, const Problem& p, const TimingBudget& budget);
  // The bandwidth ceiling: a copy kernel (bench_copy.comp / .wgsl) reading and writing `bytes`,
  // lowered to what one binding of the device may hold (`bytes` says what was copied).
  BenchTiming bench_copy(uint64_t& bytes, const TimingBudget& budget);

  // Kernel `kernel` (a Dispatch::kernel stem) compiled from `source` instead of the built-in text,
  // from the next run on; "" restores the built-in one. `file` is what compiler messages and errors
  // call it (tests splice bugs in; `--kernels DIR` passes the user's path). Its `#include "file"`
  // lines resolve like the built-in text's (gpu/kernel_source.h).
  void set_kernel_source(const std::string& kernel, std::string source, std::string file = "") {
    kernels_.set(kernel, std::move(source), std::move(file));
  }
  const KernelSources& kernel_sources() const { return kernels_; }
  // The workgroup size of dispatches that do not ask for their own (Dispatch::workgroup).
  void set_workgroup_size(uint32_t size) { workgroup_size = size; }
  // Kernels compiled from now on hold some subgroups back after every workgroup barrier, so that a
  // race a missing barrier allows shows on a device that runs subgroups close to lock step (the
  // Vulkan backend: gpu/vulkan/shaders/skew.glsl). Tests only: it slows every kernel down. False
  // where the backend has no such mode.
  virtual bool set_barrier_skew(bool on) { return !on; }

 protected:
  virtual const DeviceLimits& limits() const = 0;
  // Runs the plan over the buffers (all present by name). Throws Unsupported or std::exception.
  virtual void execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers,
                       DType dtype) = 0;
  // Starts compiling the plan's kernels for tensors of these forms (layout and dtype by tensor name)
  // without waiting; execute() later finds them compiled. Errors are left for execute() to report.
  virtual void precompile(const std::vector<Dispatch>& plan, const std::map<std::string, Physical>& forms,
                          const std::map<std::string, DType>& dtypes, DType dtype) {}
  // Runs the plan over the buffers once (as execute() does, without reading anything back), then
  // repeats the dispatch chain alone, bracketed by device timestamps, within `budget`; returns the
  // device seconds of each timed repetition (and the kernels' statistics where the backend has them).
  // The one timing primitive of a backend: Vulkan a
  // timestamp query pool, WebGPU the timestamp-query feature. Throws like execute().
  virtual PlanTiming time_plan(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                               const TimingBudget& budget) = 0;
  uint32_t workgroup_size = kDefaultWorkgroup;  // clamped to the device in fold_grid
  KernelSources kernels_;

 private:
  struct Laid {
    std::vector<Dispatch> plan;  // with the backend's defines (TS_INT_DOT)
    std::vector<BufferSpec> specs;
    std::map<std::string, Physical> phys;  // every tensor, inputs and buffers, by name
    std::map<std::string, DType> dtypes;
  };
  std::optional<RunOutput> lay_out(const OpDef& op, const Problem& p, Laid& laid) const;
  BenchTiming timed(std::vector<Dispatch> plan, std::vector<HostBuffer>& buffers, DType dtype, TimingBudget budget);
};

// The accessors' view of every tensor bound through TS_INPUT / TS_OUTPUT (gpu/ACCESSORS.md): entry b
// is {W, H, C, N} of the tensor at binding b (zero where no such tensor), and entry kLayoutMeta + b
// is {layout, 0, 0, 0} (core/layout.h's Layout): a texture's packing and an int8 tensor's packed
// layout are read at run time in both languages, so one program serves every layout of a storage
// kind (buffer, image, packed int8). One buffer per dispatch.
constexpr uint32_t kMetaBinding = 16;  // where ts_meta binds
constexpr uint32_t kLayoutMeta = 16;   // the first layout entry
constexpr uint32_t kLaneMeta = kLayoutMeta + kMetaBinding;  // .x: what ts_local_index() XORs in
std::vector<uint32_t> accessor_meta(const std::vector<std::pair<uint32_t, const HostBuffer*>>& bound, uint32_t lane_xor = 0);
// ts_local_index()'s XOR for dispatch d in workgroups of `workgroup_size`: all ones below a
// power-of-two size where d reverses its lanes (Dispatch::reverse_lanes), else 0. XOR by a constant
// keeps every subgroupShuffleXor partner a partner, and aligned runs aligned.
inline uint32_t lane_xor(const Dispatch& d, uint32_t workgroup_size) {
  return d.reverse_lanes && workgroup_size && (workgroup_size & (workgroup_size - 1)) == 0 ? workgroup_size - 1 : 0;
}

constexpr uint8_t kGuardByte = 0xA5;

}  // namespace ts
