#pragma once
// The WebGPU backend: Dawn through the npm package `webgpu`, which exports no C API, so it runs in a
// long-lived Node worker (gpu/webgpu/worker.mjs, embedded) spoken to in binary frames
// (gpu/webgpu/PROTOCOL.md). One worker per backend object; each case is one round trip.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/gpu_backend.h"
#include "gpu/webgpu/accessors.h"
#include "gpu/worker_protocol.h"
#include "gpu/webgpu/wgsl_reflect.h"

namespace ts {

class WorkerProcess;

struct WebGpuOptions {
  std::string node = "";     // path to node; default: $TOUCHSTONE_NODE, else `node` on PATH
  std::string modules = "";  // dir holding node_modules/webgpu; default: $TOUCHSTONE_WEBGPU_DIR,
                             // <exe dir>/../gpu/webgpu, <exe dir>/gpu/webgpu, the source tree's
  uint32_t timeout_ms = 20000;             // per request
  // Added to timeout_ms for a worker's start and for a request holding shaders this worker has not
  // run before (Tint, the driver, and lavapipe's compile at the first dispatch).
  uint32_t compile_timeout_ms = 300000;
  std::vector<std::string> dawn_toggles;  // more Dawn toggles to enable; "key=value" is a raw dawn.node flag
  // int8 kernels may take their dot4I8Packed path (WGSL packed_4x8_integer_dot_product) where Dawn
  // offers it; false keeps them on their scalar path (both must agree bit for bit).
  bool int_dot = true;
  // Dawn worker processes; 0: one on a CPU device, else half the cores, at most 8 (workers_ says why).
  uint32_t workers = 0;
  // Programs (WGSL text per kernel, dtype and layouts) kept before the cache starts again: it is
  // bounded for tests that replace kernels many times. Tests set it small to make it turn over.
  size_t program_cache = 256;
};

class WebGpuBackend : public GpuBackend {
 public:
  // nullptr, with the reason in *why_not, when node, the webgpu package or an adapter is missing.
  static std::unique_ptr<WebGpuBackend> create(const WebGpuOptions& options, std::string* why_not);
  ~WebGpuBackend() override;

  DeviceInfo info() const override { return info_; }
  std::string_view kind() const override { return "webgpu"; }
  unsigned concurrency() const override { return unsigned(workers_.size()); }

  // What every kernel sees before its own text (and the accessors): DTYPE, WG, the plan's defines
  // as constants, TS_INT_DOT, ts_linear_id(); `subgroups`: `enable subgroups;` (Dispatch::subgroup);
  // `packed_dot`: Dawn has dot4I8Packed.
  static std::string preamble(DType dtype, bool f16, bool subgroups, bool coopmat, const std::vector<std::string>& defines, bool packed_dot);
  // Test hook: the pid of the worker that served the last request (-1 when it is gone).
  pid_t worker_pid() const;

 protected:
  const DeviceLimits& limits() const override { return limits_; }
  void execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype) override;
  PlanTiming time_plan(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                                const TimingBudget& budget) override;
  // Sends the plan's pipelines to the worker to compile in the background (a PREPARE frame).
  void precompile(const std::vector<Dispatch>& plan, const std::map<std::string, Physical>& forms,
                  const std::map<std::string, DType>& dtypes, DType dtype) override;

 private:
  WebGpuBackend(WebGpuOptions options, std::vector<std::string> argv, std::vector<std::string> flags);
  // A kernel as it runs in one case: preamble + accessors + the kernel with its declarations in
  // place, and the resources reflected from that text.
  struct Program {
    std::string code;
    size_t line0 = 0;  // lines before the kernel file's first
    std::string file;  // what messages call the kernel (KernelText::file)
    std::vector<webgpu::TensorDecl> decls;
    webgpu::WgslResources res;
  };
  // A Dawn worker process and the shaders it was handed to compile ahead.
  struct Worker {
    std::unique_ptr<WorkerProcess> process;
    // Cases run on several threads at once (concurrency()). `mu` is held while a thread speaks to
    // the worker (a RUN, a restart, PREPAREs); `queue_mu` guards `prepared` and `pending`, so that
    // a compile-ahead hint never waits for a RUN: it is queued, and whoever holds `mu` sends it.
    struct Locks {
      std::mutex mu, queue_mu;
    };
    std::unique_ptr<Locks> locks = std::make_unique<Locks>();
    std::set<std::string> prepared;  // (workgroup size, WGSL text) queued or sent in PREPARE frames
    std::set<std::string> ran;       // shaders of requests the worker answered: compiled (`mu` held)
    nlohmann::json pending = nlohmann::json::array();  // shaders queued for the next PREPARE
    void lost();  // the next request starts a fresh worker (`mu` held)
  };
  // Sends worker i's queued shaders in one PREPARE frame (its `mu` held).
  void send_prepares(Worker& w);
  // Releases `lock` (worker w's `mu`), sending what was queued meanwhile whenever `mu` is free.
  void release(Worker& w, std::unique_lock<std::mutex>& lock);
  void start(size_t i);  // a fresh worker i (its mutex held); worker 0's first INFO fills info_ and limits_
  // The worker of a case (or a PREPARE) with these shaders (workgroup size, WGSL text each).
  size_t route(const std::vector<std::string>& shader_keys) const;
  // Sends the plan as one RUN (timing null) or TIME request and returns the worker's reply;
  // `snapshots` receives (buffer, kernel) for each scratch snapshot the reply holds.
  Frame call(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                     const TimingBudget* timing, std::vector<std::pair<size_t, std::string>>& snapshots);
  // Cached per (kernel source, case dtype, defines, layout and dtype of each declared tensor).
  // `forms`: the layout and dtype of every tensor of the case, by name.
  std::shared_ptr<const Program> program(const Dispatch& d, const KernelText& kernel, DType dtype,
                                        const std::map<std::string, webgpu::TensorForm>& forms);
  // A shader of a RUN header or a PREPARE list (PROTOCOL.md).
  static nlohmann::json shader_json(const Program& prog, const Dispatch& d, uint32_t workgroup_size);
  // What tells shaders apart (the worker's pipeline key, route()'s input): workgroup size and text.
  static std::string shader_key(const Program& prog, uint32_t workgroup_size) {
    return cat(workgroup_size, "\n", prog.code);
  }

  WebGpuOptions options_;
  // Worker i's command line: argv_ (node, worker.mjs, the modules dir, the layer dir), then i, then
  // the Dawn flags.
  std::vector<std::string> argv_, flags_;
  // One worker on a CPU device. On a GPU several: Dawn makes one device's pipelines one at a time
  // (a worker's RUNs spent most of their time waiting for them), and a sweep needs ~20 distinct ones. A case goes to the worker its shaders hash to, so each pipeline
  // is made once, by one worker, while the others make theirs.
  // On a GPU, cases run on as many threads at once as there are workers (concurrency()): the cases
  // of different shaders then go to different workers side by side.
  std::vector<Worker> workers_;
  std::atomic<size_t> last_ = 0;  // the worker that served the last request
  DeviceInfo info_;
  DeviceLimits limits_;
  uint64_t max_buffer_size_ = 0;  // maxBufferSize
  bool packed_dot_ = false;       // Dawn knows dot4I8Packed (WGSL language feature packed_4x8_integer_dot_product)
  std::mutex programs_mu_;  // decls_ and programs_
  std::map<std::string, std::vector<webgpu::TensorDecl>> decls_;  // by kernel source text
  std::map<std::string, std::shared_ptr<const Program>> programs_;
  // Texture formats the accessors use, each with why Dawn refuses it as a 3-D sampled and write-only
  // storage texture ("" when it allows it), probed by the worker at start.
  std::map<std::string, std::string> formats_;
};

}  // namespace ts
