#include "gpu/vulkan/vulkan_backend.h"

#include <algorithm>
#include <chrono>
#include <atomic>
#include <functional>
#include <mutex>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "core/profile.h"
#include "core/task_pool.h"
#include "gpu/vulkan/context.h"
#include "gpu/vulkan/images.h"
#include "gpu/vulkan/pipelines.h"
#include "gpu/vulkan/programs.h"
#include "gpu/vulkan/submission.h"

namespace ts {

namespace vk {

// A logical device with its buffers and pipelines: replaced as a whole when a kernel hangs or the
// device is lost.
struct Gpu {
  Gpu(const Adapter& a, bool capture_stats)
      : device(a), buffers(device), images(device), pipelines(device, capture_stats && a.features.exec_stats,
                  a.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {}
  Device device;
  BufferPool buffers;
  ImageMemory images;
  Pipelines pipelines;

  // Whether every step's pipeline has finished a dispatch on this device before: a CPU device
  // (lavapipe) compiles a pipeline's machine code at its first dispatch, inside the queue's work,
  // so that dispatch's wait holds a compile (seconds on a busy 2-core runner) besides the kernel.
  bool dispatched_before(const std::vector<Step>& steps) const {
    std::lock_guard lock(mu);
    for (const Step& st : steps)
      if (!dispatched.count(st.pipeline->pipeline)) return false;
    return true;
  }
  // Returns how many were new.
  size_t mark_dispatched(const std::vector<Step>& steps) {
    std::lock_guard lock(mu);
    size_t fresh = 0;
    for (const Step& st : steps) fresh += dispatched.insert(st.pipeline->pipeline).second;
    return fresh;
  }

 private:
  mutable std::mutex mu;
  std::unordered_set<VkPipeline> dispatched;
};

// A device whose submission timed out or was lost, kept until that work is over: destroying
// objects the device may still be using is undefined behaviour. Cases still running on it on other
// threads hold it too (shared), and are abandoned with it if their work does not finish either.
// The submission refers into the device (its context, buffers and in-flight list), so it must be
// destroyed first, always: the pair is neither copied nor moved (a memberwise move-assignment
// drops the old device before the old submission, which then frees into a destroyed device), and
// the list of them holds pointers.
class Abandoned {
 public:
  Abandoned(std::shared_ptr<Gpu> gpu, std::unique_ptr<Submission> work) : gpu_(std::move(gpu)), work_(std::move(work)) {}
  ~Abandoned() { work_.reset(); }
  Abandoned(const Abandoned&) = delete;
  Abandoned& operator=(const Abandoned&) = delete;

  // Whether its work is over (signalled, or the device lost), waiting up to wait_ns for it.
  bool over(uint64_t wait_ns) const {
    if (!work_->finished()) work_->wait(wait_ns);
    return work_->finished();
  }
  // Teardown while the work still runs: neither may be destroyed, so both are leaked.
  void leak() {
    (void)work_.release();
    (void)new std::shared_ptr<Gpu>(std::move(gpu_));
  }

 private:
  std::shared_ptr<Gpu> gpu_;
  std::unique_ptr<Submission> work_;
};

// Thrown when a case's work did not finish because another case's kernel, ahead of it in the
// queue, did not: the case runs again on the new device instead of being blamed.
struct RunAgain {};

}  // namespace vk

namespace {

// How long teardown waits for an abandoned kernel before leaking its device rather than hanging.
constexpr uint64_t kDrainNs = 2'000'000'000;

std::string kernel_list(const std::vector<Dispatch>& plan) {
  std::string s;
  for (const Dispatch& d : plan) s += (s.empty() ? "" : ", ") + d.kernel;
  return s;
}

void put_uniform(uint8_t* at, const vk::PushMember& m, double v, const std::string& kernel) {
  auto store = [&](auto x) { std::memcpy(at, &x, sizeof x); };
  auto fits = [&](double lo, double hi, const char* type) {
    if (!(v >= lo && v <= hi && v == std::floor(v)))
      throw std::runtime_error(cat("vulkan: kernel '", kernel, "' push constant '", m.name, "' = ", v,
                                   " is not a ", type, " value"));
  };
  switch (m.type) {
    case vk::PushMember::Type::u32: fits(0, 4294967295.0, "uint"); return store(uint32_t(v));
    case vk::PushMember::Type::i32: fits(-2147483648.0, 2147483647.0, "int"); return store(int32_t(v));
    case vk::PushMember::Type::f32: return store(float(v));
  }
}

}  // namespace

struct VulkanBackend::State {
  Backend* owner = nullptr;  // its counters
  VulkanOptions options;
  std::unique_ptr<vk::Instance> instance;
  vk::Adapter adapter;
  DeviceLimits limits;
  vk::Programs programs;
  std::mutex mu;  // gpu and abandoned: cases run on several threads (concurrency())
  std::vector<std::unique_ptr<vk::Abandoned>> abandoned;
  std::shared_ptr<vk::Gpu> gpu;  // null after a hang or a lost device, until the next run
  // Compile-ahead threads: one fewer than the cores, since the run's thread keeps one busy. Tasks
  // use `programs` and hold the Gpu whose pipelines they make: drained before `programs` goes.
  TaskPool compiler{std::max(1u, std::thread::hardware_concurrency()) - 1};

  // The device cases run on now (a new one after a hang).
  std::shared_ptr<vk::Gpu> current() {
    std::lock_guard lock(mu);
    if (!gpu) gpu = std::make_shared<vk::Gpu>(adapter, options.kernel_stats);
    return gpu;
  }

  ~State() {
    compiler.drain();
    gpu.reset();
    if (!instance) return;  // create() failed before there was one (no Vulkan driver at all)
    reap(kDrainNs);
    if (abandoned.empty()) return;
    // Still running: its objects can't be destroyed; leaking them (and the instance they belong
    // to) beats hanging the process.
    for (std::unique_ptr<vk::Abandoned>& a : abandoned) a->leak();
    (void)instance.release();
  }

  // Destroys the abandoned devices whose work is over: signalled, or the device is lost. The
  // validation layer never sees a lost device's work retire and reports its objects as in use when
  // they are destroyed, although the spec no longer counts them as pending: those messages are
  // dropped (the case that lost the device was reported already).
  void reap(uint64_t wait_ns) {
    std::lock_guard lock(mu);
    size_t seen = instance->messages().size();
    std::erase_if(abandoned, [&](const std::unique_ptr<vk::Abandoned>& a) { return a->over(wait_ns); });
    instance->messages().resize(seen);
  }

  // The host buffer a kernel binds as `tensor`; throws naming the kernel's file, `what` (the
  // binding, or the declaration and its line) and the case's tensors if the case has none.
  static size_t find_tensor(const std::string& file, const std::vector<HostBuffer>& buffers, const std::string& tensor,
                            const std::string& what) {
    auto it = std::find_if(buffers.begin(), buffers.end(), [&](const HostBuffer& h) { return h.name == tensor; });
    if (it == buffers.end()) {
      std::string names;
      for (const HostBuffer& h : buffers) names += (names.empty() ? "" : ", ") + h.name;
      throw std::runtime_error(cat("vulkan: kernel ", file, " binds tensor '", tensor, "' (", what,
                                   "), which is not among the case's tensors (", names, ")"));
    }
    return size_t(it - buffers.begin());
  }
  static std::string declared_at(const vk::AccessorDecl& a) {
    return cat(a.output ? "TS_OUTPUT(" : "TS_INPUT(", a.name, ", ", a.binding, ") at line ", a.line);
  }

  // A step's bindings and push constants; `meta` receives ts_meta's contents when the kernel declares
  // tensors through TS_INPUT / TS_OUTPUT (it binds at kMetaBinding, appended by run()): the dims of
  // accessor_meta(): the dims and each tensor's layout (gpu/gpu_backend.h).
  vk::Step prepare(vk::Gpu& gpu, const Dispatch& d, const std::vector<HostBuffer>& buffers, DType dtype, uint32_t wg,
                   std::vector<uint32_t>& meta) {
    auto form_of = [&](const vk::AccessorDecl& a, const std::string& file) {
      const HostBuffer& h = buffers[find_tensor(file, buffers, bound_tensor(d, a.name), declared_at(a))];
      return vk::TensorForm{h.phys.layout, h.dtype};
    };
    const vk::Program& prog = programs.get(d, dtype, form_of);
    const vk::Reflection& r = prog.reflection;
    for (uint32_t cap : r.capabilities)
      if (std::string word, why = adapter.missing_for(cap, &word); !why.empty())
        throw Unsupported(word, cat("vulkan: kernel ", prog.file, " ", why));
    const uint32_t shared_max = adapter.props.limits.maxComputeSharedMemorySize;
    if (r.shared_bytes > shared_max)  // NVIDIA loses the device instead of refusing the pipeline
      throw Unsupported("", cat("vulkan: kernel ", prog.file, " declares ", r.shared_bytes, " bytes of shared memory; ",
                            adapter.props.deviceName, " allows ", shared_max, " (maxComputeSharedMemorySize)"));
    if (r.push_size > adapter.props.limits.maxPushConstantsSize)
      throw Unsupported("", cat("vulkan: kernel ", prog.file, " has ", r.push_size, " bytes of push constants; ",
                            adapter.props.deviceName, " allows ", adapter.props.limits.maxPushConstantsSize));
    vk::Step st;
    st.kernel = d.kernel;
    std::vector<std::pair<uint32_t, const HostBuffer*>> declared;
    meta.clear();
    for (const vk::StorageBinding& b : r.buffers) {
      if (b.binding == kMetaBinding && !b.image && b.array == "ts_meta" && !prog.accessors.empty()) continue;
      auto acc = std::find_if(prog.accessors.begin(), prog.accessors.end(),
                              [&](const vk::AccessorDecl& a) { return a.binding == b.binding; });
      const bool declared_here = acc != prog.accessors.end();
      const std::string tensor = bound_tensor(d, declared_here ? acc->name : b.array);
      const size_t index = find_tensor(prog.file, buffers, tensor,
                                       declared_here ? declared_at(*acc) : cat("array ", b.array, ", binding ", b.binding));
      const HostBuffer& h = buffers[index];
      if (h.image() != b.image)
        throw std::runtime_error(cat("vulkan: kernel ", prog.file, " binds tensor '", tensor, "' (binding ", b.binding,
                                     ") as a storage ", b.image ? "image" : "buffer", ", but the case holds it as ",
                                     layout_name(h.phys.layout),
                                     declared_here ? "" : " (declare it with TS_INPUT / TS_OUTPUT: gpu/ACCESSORS.md)"));
      st.bindings.push_back({b.binding, index});
    }
    // Every declared tensor's entry, whether or not the compiler kept its resource (a kernel may use
    // only NAME_numel()).
    for (const vk::AccessorDecl& a : prog.accessors)
      declared.push_back({a.binding, &buffers[find_tensor(prog.file, buffers, bound_tensor(d, a.name), declared_at(a))]});
    std::optional<Grid> grid = dispatch_grid(d, wg, limits);
    if (!grid)  // GpuBackend::run checked this already
      throw std::runtime_error(cat("vulkan: dispatch of kernel '", d.kernel, "' does not fit the device grid"));
    if (!prog.accessors.empty()) meta = accessor_meta(declared, lane_xor(d, grid->workgroup_size));
    st.push.resize(r.push_size);
    for (const vk::PushMember& m : r.push) {
      auto u = d.uniforms.find(m.name);
      if (u == d.uniforms.end())
        throw std::runtime_error(cat("vulkan: kernel ", prog.file, " push constant '", m.name,
                                     "' has no value in the dispatch's uniforms"));
      put_uniform(st.push.data() + m.offset, m, u->second, d.kernel);
    }
    st.grid = *grid;
    st.concurrent = d.concurrent;
    st.pipeline = &gpu.pipelines.get(prog, grid->workgroup_size);
    return st;
  }

  // Without a barrier between them, dispatch i and the one before must not share a tensor that the
  // plan writes (an output, scratch, a cache updated in place): one could see the other's writes half done.
  static void refuse_shared_writes(const std::vector<Dispatch>& plan, const std::vector<vk::Step>& steps,
                                   const std::vector<HostBuffer>& buffers, size_t i) {
    for (const auto& mine : steps[i].bindings)
      for (const auto& theirs : steps[i - 1].bindings)
        if (theirs.second == mine.second && buffers[mine.second].read_back)
          throw std::runtime_error(cat("vulkan: kernel ", plan[i].kernel, " runs beside ", plan[i - 1].kernel,
                                       " (Dispatch::concurrent, no barrier between), but both bind tensor '",
                                       buffers[mine.second].name, "', which the plan writes"));
  }

  using Then = std::function<void(std::unique_ptr<vk::Submission>&, const std::vector<vk::Step>&,
                                  const std::shared_ptr<vk::Gpu>&)>;

  // Uploads the buffers and runs the plan once, then hands the finished submission to `then` (read
  // back, or time the chain again).
  void run(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype, uint32_t wg,
           std::atomic<uint64_t>& allocations, std::atomic<uint64_t>& dispatches, const Then& then) {
    const std::shared_ptr<vk::Gpu> g = current();
    std::vector<vk::Step> steps;
    std::vector<std::vector<uint32_t>> metas(plan.size());
    {
      Phase ph("vulkan: programs, pipelines");
      for (size_t i = 0; i < plan.size(); ++i) steps.push_back(prepare(*g, plan[i], buffers, dtype, wg, metas[i]));
      for (size_t i = 1; i < steps.size(); ++i)
        if (steps[i].concurrent) refuse_shared_writes(plan, steps, buffers, i);
    }
    for (const HostBuffer& h : buffers)
      if (h.image()) vk::check_image_support(adapter, h);
    // Each dispatch's ts_meta rides along as one more (input) buffer, removed again before returning.
    const size_t own = buffers.size();
    struct Trim {
      std::vector<HostBuffer>& b;
      size_t n;
      ~Trim() { b.erase(b.begin() + ptrdiff_t(n), b.end()); }
    } trim{buffers, own};
    for (size_t i = 0; i < plan.size(); ++i) {
      if (metas[i].empty()) continue;
      HostBuffer m;
      m.name = cat("ts_meta of ", plan[i].kernel);
      m.dtype = DType::i32;
      m.phys = physical({int64_t(metas[i].size())}, DType::i32, Layout::buffer);
      m.bytes.resize(metas[i].size() * sizeof(uint32_t));
      std::memcpy(m.bytes.data(), metas[i].data(), m.bytes.size());
      m.size = m.bytes.size();
      steps[i].bindings.push_back({kMetaBinding, buffers.size()});
      buffers.push_back(std::move(m));
    }
    auto work = std::make_unique<vk::Submission>(g->device, g->buffers, g->images);
    {
      Phase ph("vulkan: upload (host copies)");
      work->upload(buffers, allocations);
    }
    {
      Phase ph("vulkan: record, submit, wait");
      VkResult r = work->submit(steps, buffers);
      dispatches += steps.size();
      const size_t fresh = await(r, work, plan, steps, g);
      owner->pipelines_new += fresh;
      owner->pipelines_reused += steps.size() - fresh;
    }
    Phase ph("vulkan: read back / timing");
    then(work, steps, g);
  }

  // Waits for what `work` submitted on g (`r`: the submit's result). A timeout or a lost device
  // abandons the device with the submission and throws; the next run uses a new device. The
  // timeout counts from when no earlier case's work is left ahead in the queue; if the device is
  // abandoned meanwhile for another case, this one throws RunAgain.
  // Returns how many of the steps' pipelines ran here for the first time.
  size_t await(VkResult r, std::unique_ptr<vk::Submission>& work, const std::vector<Dispatch>& plan,
             const std::vector<vk::Step>& steps, const std::shared_ptr<vk::Gpu>& g) {
    // A failed submit leaves nothing in flight; a lost device is replaced below.
    if (r != VK_ERROR_DEVICE_LOST) vk::check(r, "vkQueueSubmit");
    using Clock = std::chrono::steady_clock;
    // A first dispatch on a device that compiles there gets the compile budget on top: a slow
    // compile on a loaded machine is not a slow kernel.
    const bool compiles = compiles_at_dispatch() && !g->dispatched_before(steps);
    const uint64_t budget_ms = uint64_t(options.timeout_ms) + (compiles ? options.compile_timeout_ms : 0);
    const auto timeout = std::chrono::milliseconds(budget_ms);
    auto deadline = Clock::now() + timeout;
    if (r == VK_SUCCESS) r = work->wait(budget_ms * 1'000'000);
    while (r == VK_TIMEOUT && !g->device.abandoned) {
      const auto now = Clock::now();
      if (work->queued_behind()) deadline = now + timeout;
      else if (now >= deadline) break;
      r = work->wait(uint64_t(std::chrono::nanoseconds(std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(10))).count()));
    }
    if (r != VK_SUCCESS) {
      const bool someone_else = g->device.abandoned.exchange(true) && r == VK_TIMEOUT;
      {
        std::lock_guard lock(mu);
        if (gpu == g) gpu.reset();
        abandoned.push_back(std::make_unique<vk::Abandoned>(g, std::move(work)));
      }
      if (someone_else) throw vk::RunAgain{};
      std::string what =
          r != VK_TIMEOUT ? cat("the device failed (", vk::result_name(r), ")")
          : compiles      ? cat("the first dispatch of new pipelines did not finish within ", budget_ms, " ms (",
                                options.timeout_ms, " ms for the kernel and a compile budget of ", options.compile_timeout_ms,
                                " ms: ", adapter.props.deviceName, " compiles a pipeline at its first dispatch)")
                          : cat("kernel did not finish within ", options.timeout_ms, " ms");
      throw std::runtime_error(cat("vulkan: ", what, " (", kernel_list(plan), "); the next run uses a new device"));
    }
    return g->mark_dispatched(steps);
  }

  bool compiles_at_dispatch() const { return adapter.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }

  // GpuBackend::time_plan: warm-up, then batches of timed repetitions (1, 2, 4, ... up to 64 per
  // command buffer) until the budget is spent.
  std::vector<double> time(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                           uint32_t wg, const TimingBudget& budget, std::atomic<uint64_t>& allocations,
                           std::atomic<uint64_t>& dispatches,
                           std::vector<KernelStatistics>& kernels) {
    std::vector<double> out;
    run(plan, buffers, dtype, wg, allocations, dispatches,
        [&](std::unique_ptr<vk::Submission>& work, const std::vector<vk::Step>& steps,
            const std::shared_ptr<vk::Gpu>& g) {
          const uint32_t untimed = std::min<uint32_t>(budget.untimed, uint32_t(steps.size()));
          for (size_t i = untimed; i < steps.size(); ++i)
            if (!steps[i].pipeline->stats.empty()) kernels.push_back({steps[i].kernel, steps[i].pipeline->stats});
          auto batch = [&](uint32_t reps) {
            VkResult r = work->submit_timed(steps, reps, budget.stream, untimed);
            dispatches += uint64_t(reps) * (budget.stream * (steps.size() - untimed) + untimed);
            await(r, work, plan, steps, g);
            return work->timed_seconds(reps);
          };
          const auto t0 = std::chrono::steady_clock::now();
          if (budget.warmup) batch(budget.warmup);
          while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < budget.warmup_seconds)
            batch(64);
          const auto timed0 = std::chrono::steady_clock::now();
          for (uint32_t n = 1; out.size() < budget.max_reps; n = std::min(2 * n, 64u)) {
            const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - timed0).count();
            if (out.size() >= budget.min_reps && spent >= budget.max_seconds) break;
            for (double t : batch(std::min<uint32_t>(n, budget.max_reps - uint32_t(out.size())))) out.push_back(t);
          }
        });
    return out;
  }

  // Runs `f` again (at most twice more) while it throws RunAgain: another case's kernel did not
  // finish, and took the device this case's work was queued on.
  template <class F>
  void again(F&& f) {
    for (int tries = 0;; ++tries) try {
        return f();
      } catch (const vk::RunAgain&) {
        if (tries == 2)
          throw std::runtime_error("vulkan: three devices in a row were abandoned for other cases' kernels while this case waited");
      }
  }

  // Removes and returns, one per line, the validation messages that arrived after the first `seen`.
  std::string messages_since(size_t seen) {
    std::vector<std::string>& all = instance->messages();
    std::string s;
    for (size_t i = seen; i < all.size(); ++i) s += "\n" + all[i];
    all.resize(std::min(seen, all.size()));
    return s;
  }
};

void VulkanBackend::precompile(const std::vector<Dispatch>& plan, const std::map<std::string, Physical>& forms,
                               const std::map<std::string, DType>& dtypes, DType dtype) {
  // Validation messages are gathered per run and blamed on its case: a compile elsewhere would blur
  // that, and interleave with the run's thread in the message list.
  if (s_->instance->validation()) return;
  std::shared_ptr<vk::Gpu> gpu;
  {
    std::lock_guard lock(s_->mu);
    gpu = s_->gpu;
  }
  if (!gpu) return;  // after a hang: the next run makes a new device
  State* s = s_.get();
  for (const Dispatch& d : plan) {
    std::optional<Grid> grid = dispatch_grid(d, workgroup_size, s->limits);
    if (!grid) continue;
    s->compiler.submit([s, gpu, d, forms, dtypes, dtype, wg = grid->workgroup_size] {
      try {
        const vk::Program& prog = s->programs.get(d, dtype, [&](const vk::AccessorDecl& a, const std::string&) {
          const std::string tensor = bound_tensor(d, a.name);
          return vk::TensorForm{forms.at(tensor).layout, dtypes.at(tensor)};
        });
        for (uint32_t cap : prog.reflection.capabilities)
          if (!s->adapter.missing_for(cap).empty()) return;
        if (prog.reflection.shared_bytes > s->adapter.props.limits.maxComputeSharedMemorySize) return;
        gpu->pipelines.warm(prog, wg);
      } catch (const std::exception&) {
        // The run compiles it again and reports the error as its case's outcome.
      }
    });
  }
}

VulkanBackend::VulkanBackend(std::unique_ptr<State> state) : GpuBackend(".comp"), s_(std::move(state)) {
  s_->programs.sources = &kernels_;
  s_->owner = this;
}
VulkanBackend::~VulkanBackend() = default;

std::unique_ptr<VulkanBackend> VulkanBackend::create(const VulkanOptions& options, std::string* why_not) {
  try {
    auto s = std::make_unique<State>();
    s->options = options;
    s->instance = std::make_unique<vk::Instance>(options.validation);
    s->adapter = vk::select_adapter(*s->instance, options.device);
    const VkPhysicalDeviceLimits& l = s->adapter.props.limits;
    DeviceLimits& lim = s->limits;
    std::copy_n(l.maxComputeWorkGroupCount, 3, lim.max_workgroups);
    lim.max_workgroup_size_x = l.maxComputeWorkGroupSize[0];
    lim.max_invocations = l.maxComputeWorkGroupInvocations;
    // A binding is bounded by the range a descriptor may cover and by the largest single allocation,
    // which also holds the guard bands.
    lim.max_buffer_bytes = std::min<uint64_t>(l.maxStorageBufferRange, s->adapter.max_allocation - 2 * kGuardBytes);
    lim.f16 = s->adapter.features.storage16 && s->adapter.features.float16;
    // bfloat16 is 16-bit words converted in the accessors: 16-bit storage, no 16-bit arithmetic.
    lim.bf16 = s->adapter.features.storage16;
    lim.max_image_3d = l.maxImageDimension3D;
    lim.int_dot = s->adapter.features.int_dot && options.int_dot;
    if (s->adapter.features.subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) lim.subgroup = s->adapter.subgroup_size;
    if (s->adapter.features.coopmat_nv) lim.no_coopmat.clear();
    else
      lim.no_coopmat = cat(s->adapter.props.deviceName, " has no VK_NV_cooperative_matrix with the shapes ",
                           vk::kCoopmatShapes[0], " and ", vk::kCoopmatShapes[1],
                           s->adapter.features.coopmat_shapes.empty() ? "" : " (it lists others)");
    s->programs.f16_rte = s->adapter.features.rte16;
    s->current();
    return std::unique_ptr<VulkanBackend>(new VulkanBackend(std::move(s)));
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return nullptr;
  }
}

std::vector<std::string> VulkanBackend::list_devices(std::string* why_not) {
  try {
    vk::Instance instance(false);
    return vk::numbered(vk::adapters(instance));
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return {};
  }
}

std::string VulkanBackend::device_name(const std::string& selector, std::string* why_not) {
  try {
    vk::Instance instance(false);
    const vk::Adapter pick = vk::select_adapter(instance, selector);
    const std::string name = pick.props.deviceName;
    // Dawn picks the first adapter of a name: a later device of the same name cannot be reached.
    for (const vk::Adapter& a : vk::adapters(instance)) {
      if (a.props.deviceName != name) continue;
      if (a.handle == pick.handle) return name;
      throw std::runtime_error(cat("device '", name, "' selected by --device '", selector, "' shares its name with an earlier device, and Dawn selects adapters by name"));
    }
    return name;
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return "";
  }
}

int VulkanBackend::device_index(const std::string& selector, std::string* why_not) {
  try {
    vk::Instance instance(false);
    const vk::Adapter pick = vk::select_adapter(instance, selector);
    const auto all = vk::adapters(instance);
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].handle == pick.handle) return int(i);
    throw std::runtime_error("the selected device is not among the instance's devices");
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return -1;
  }
}

DeviceInfo VulkanBackend::info() const {
  const vk::Adapter& a = s_->adapter;
  const vk::Features& f = a.features;
  const DeviceLimits& lim = s_->limits;
  DeviceInfo i{"vulkan", a.props.deviceName, {}};
  auto add = [&](bool on, std::string cap) {
    if (on) i.capabilities.push_back(std::move(cap));
  };
  add(true, cat("api=", vk::version_string(a.props.apiVersion)));
  add(true, cat("driver=", a.driver));
  // bench picks its sizes by it (quick on a CPU device such as lavapipe).
  add(a.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU, "device-type=cpu");
  add(lim.f16, "shader-f16");
  // float16 buffer stores convert in the device's nearest-even conversion (gpu/ACCESSORS.md).
  add(lim.f16 && f.rte16, "f16-rte");
  add(f.int8 && f.storage8, "int8");
  add(f.int16, "int16");
  // The same words as WebGPU's: used by the int8 kernels, or present and turned off.
  add(lim.int_dot, "int8-dot-product");
  add(f.int_dot && !lim.int_dot, "int8-dot-product=off");
  add(true, cat("subgroup-size=", a.subgroup_size));
  add(true, cat("max-workgroups=", lim.max_workgroups[0], "x", lim.max_workgroups[1], "x", lim.max_workgroups[2]));
  add(true, cat("max-workgroup-invocations=", lim.max_invocations));
  add(true, cat("max-storage-buffer=", lim.max_buffer_bytes));
  add(true, cat("max-image-3d=", lim.max_image_3d));
  add(lim.bf16, "bfloat16");
  add(f.float64, "shader-f64");
  add(f.int64, "int64");
  add(lim.subgroup != 0, "subgroups");  // kernels may shuffle within subgroups (DeviceLimits::subgroup)
  for (const vk::TexelFormat& t : vk::texel_formats()) add(vk::storage_image_3d(a, t.format), t.capability);
  add(s_->instance->validation(), "validation");
  // bench --kernel-stats: the driver's own account of each compiled kernel.
  add(f.exec_stats, "kernel-statistics");
  // The tensor-core kernels (impl=coopmat) need it; the shapes are what the driver lists.
  add(f.coopmat_nv, "cooperative-matrix");
  for (const std::string& shape : f.coopmat_shapes) add(true, cat("coopmat-shape=", shape));
  add(f.coopmat_khr_ext && !f.coopmat_nv, "cooperative-matrix-khr-only");
  return i;
}

std::vector<std::string> VulkanBackend::take_validation_messages() {
  return std::exchange(s_->instance->messages(), {});
}

VulkanBackend::ShaderStats VulkanBackend::shader_stats() const {
  const vk::Programs::Counts c = s_->programs.counts();
  std::lock_guard lock(s_->mu);
  return {c.compiles, c.cache_hits, s_->gpu ? s_->gpu->pipelines.size() : 0};
}

const DeviceLimits& VulkanBackend::limits() const { return s_->limits; }

// Before the first run: compile-ahead threads read it (Programs::get), and programs compiled before
// keep what they were compiled with (the text, skew.glsl in or out, is their cache key).
bool VulkanBackend::set_barrier_skew(bool on) {
  s_->programs.skew = on;
  return true;
}

unsigned VulkanBackend::concurrency() const {
  // Validation messages are blamed on the one run in progress.
  if (s_->instance->validation()) return 1;
  if (s_->options.lanes) return s_->options.lanes;
  // A CPU device (lavapipe) spreads each case over the cores itself. On a GPU a warm check's lane
  // spends most of a case on the host (packing, poison, unpacking, guards): several lanes overlap it.
  if (s_->adapter.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return 1;
  return std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u);
}

void VulkanBackend::execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype) {
  s_->reap(0);
  size_t seen = s_->instance->messages().size();
  try {
    s_->again([&] {
      s_->run(plan, buffers, dtype, workgroup_size, allocations, dispatches,
              [&](std::unique_ptr<vk::Submission>& work, const std::vector<vk::Step>&, const std::shared_ptr<vk::Gpu>&) {
                work->read_back(buffers);
              });
    });
  } catch (const Unsupported&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what() + s_->messages_since(seen));
  }
  if (std::string m = s_->messages_since(seen); !m.empty())
    throw std::runtime_error("vulkan: validation messages during the run:" + m);
}

PlanTiming VulkanBackend::time_plan(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                                    const TimingBudget& budget) {
  s_->reap(0);
  size_t seen = s_->instance->messages().size();
  PlanTiming out;
  out.no_kernel_statistics =
      !s_->adapter.features.exec_stats ? cat(s_->adapter.props.deviceName, " does not offer VK_KHR_pipeline_executable_properties")
      : !s_->options.kernel_stats      ? "not captured (VulkanOptions::kernel_stats is off)"
                                       : "the driver returned no statistics for these pipelines";
  try {
    s_->again([&] {
      out.kernels.clear();
      out.seconds = s_->time(plan, buffers, dtype, workgroup_size, budget, allocations, dispatches, out.kernels);
    });
  } catch (const Unsupported&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what() + s_->messages_since(seen));
  }
  if (std::string m = s_->messages_since(seen); !m.empty())
    throw std::runtime_error("vulkan: validation messages while timing:" + m);
  return out;
}

}  // namespace ts
