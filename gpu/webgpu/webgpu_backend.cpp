#include "gpu/webgpu/webgpu_backend.h"

#include <algorithm>
#include <thread>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <regex>
#include <span>

#include <nlohmann/json.hpp>

#include "core/contract.h"
#include "core/profile.h"
#include "gpu/embedded.h"
#include "gpu/kernel_source.h"
#include "gpu/node.h"
#include "gpu/webgpu/locate.h"
#include "gpu/worker_process.h"

namespace ts {

using ts::Frame;
using ts::FrameType;
using webgpu::UniformMember;
using webgpu::WgslResources;
using ts::WorkerLost;
using ts::WorkerProcess;
using json = nlohmann::json;

namespace {

// NVIDIA's Vulkan driver offers shader-f16 only with this toggle (ENVIRONMENT.md); others ignore it.
// Not disable_robustness: lavapipe and NVIDIA's driver drop writes outside a binding's range with or
// without it (measured), so past-the-end writes are seen only through GpuBackend binding outputs up
// to the end of their trailing guard, which robust access leaves intact.
// allow_unsafe_apis: Dawn offers its subgroup matrices (chromium-experimental-subgroup-matrix, the
// WGSL kernels' tensor cores) only behind it. It does not let a kernel use more of WGSL than a
// browser would: a kernel cannot enable an extension itself (its text follows the preamble's
// declarations, which every `enable` must precede), so only what its plan asks for is enabled.
const std::vector<std::string> kDefaultToggles = {"vulkan_enable_f16_on_nvidia", "allow_unsafe_apis"};

size_t round4(size_t n) { return (n + 3) & ~size_t(3); }

// WebGPU buffer and binding sizes here are whole 16-byte texels, never 0: the accessors read a
// buffer as array<vec4<f32>> (or 8-byte texels), whose last texel must lie inside the binding. An
// input's bytes past its end are zero; an output's belong to its guard band (GpuBackend checks them).
size_t padded_size(size_t bytes) { return std::max<size_t>(16, (bytes + 15) & ~size_t(15)); }

// copyTextureToBuffer writes rows of texels at a multiple of 256 bytes apart.
size_t row_pitch(const HostBuffer& b) { return (size_t(b.phys.extent[0]) * b.phys.texel_bytes + 255) & ~size_t(255); }

// What the worker returns for a read-back buffer: its bytes, or an image's rows at row_pitch.
size_t result_size(const HostBuffer& b) {
  if (!b.image()) return padded_size(b.bytes.size());
  return row_pitch(b) * size_t(b.phys.extent[1]) * size_t(b.phys.extent[2]);
}

// Copies a read-back region into `dst` (an image's rows repacked to texels x fastest).
void take_result(const HostBuffer& b, const uint8_t* at, uint8_t* dst) {
  if (b.bytes.empty()) return;  // an empty vector's data() may be null
  if (!b.image()) {
    std::memcpy(dst, at, b.bytes.size());
    return;
  }
  const size_t row = size_t(b.phys.extent[0]) * b.phys.texel_bytes, pitch = row_pitch(b);
  const size_t rows = size_t(b.phys.extent[1]) * size_t(b.phys.extent[2]);
  if (row == pitch) {
    std::memcpy(dst, at, row * rows);
    return;
  }
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * row, at + r * pitch, row);
}

// What every kernel sees before its own text (WGSL has no preprocessor): the storage type (bfloat16
// has none: its tensors go through the accessors), the workgroup size as a pipeline-overridable constant, the plan's variant defines as constants, and
// the linear id of a grid that fold_grid() folded x first, then y (gpu/gpu_backend.cpp).
//
// TS_INT_DOT (GpuBackend::run adds TS_INT_DOT=1 when DeviceLimits::int_dot) is always a constant,
// 0 when off, since a kernel cannot test whether a WGSL name exists; where Dawn lacks
// dot4I8Packed, a scalar stand-in lets the kernel's `if (TS_INT_DOT == 1)` branch, dead there,
// compile (a module-scope function may shadow a builtin's name).
}  // namespace

std::string WebGpuBackend::preamble(DType dtype, bool f16, bool subgroups, bool coopmat,
                                    const std::vector<std::string>& defines, bool packed_dot) {
  std::string s;
  if (f16) s += "enable f16;\n";
  if (subgroups) s += "enable subgroups;\n";  // kernels that shuffle (Dispatch::subgroup)
  if (coopmat) s += "enable chromium_experimental_subgroup_matrix;\n";  // Dispatch::cooperative_matrix
  // int8 kernels address packed 32-bit words themselves: they get no DTYPE.
  if (dtype == DType::f32) s += "alias DTYPE = f32;\n";
  if (dtype == DType::f16) s += "alias DTYPE = f16;\n";
  if (dtype == DType::i32) s += "alias DTYPE = i32;\n";
  s += "override WG: u32 = 64;\n";
  for (const std::string& d : defines) {
    size_t eq = d.find('=');
    s += cat("const ", d.substr(0, eq), " = ", eq == std::string::npos ? "1" : d.substr(eq + 1), ";\n");
  }
  const bool int_dot = std::any_of(defines.begin(), defines.end(), [](const std::string& d) {
    return d.substr(0, d.find('=')) == "TS_INT_DOT";
  });
  if (!int_dot) s += "const TS_INT_DOT = 0;\n";
  if (!packed_dot)
    s += "fn dot4I8Packed(a: u32, b: u32) -> i32 {\n"
         "  let s = vec4<u32>(24u, 16u, 8u, 0u);\n"
         "  return dot(bitcast<vec4<i32>>(vec4<u32>(a) << s) >> vec4<u32>(24u), bitcast<vec4<i32>>(vec4<u32>(b) << s) >> vec4<u32>(24u));\n"
         "}\n";
  s += "fn ts_linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {\n"
       "  return gid.x + nwg.x * WG * (gid.y + nwg.y * gid.z);\n"
       "}\n";
  return s;
}

namespace {

// The uniform block's bytes, member by member from the plan's values, padded to 16 bytes (the
// alignment of uniform buffer bindings).
std::vector<uint8_t> uniform_bytes(const webgpu::UniformBinding& u, const Dispatch& d) {
  std::vector<uint8_t> out((u.members.size() * 4 + 15) & ~size_t(15), 0);
  for (size_t i = 0; i < u.members.size(); ++i) {
    const UniformMember& m = u.members[i];
    auto it = d.uniforms.find(m.name);
    if (it == d.uniforms.end())
      throw std::runtime_error(cat("webgpu: kernel ", d.kernel, " reads uniform '", m.name, "', which the plan does not set"));
    const double v = it->second;
    uint32_t bits = 0;
    if (m.type == UniformMember::Type::f32) {
      float f = float(v);
      std::memcpy(&bits, &f, 4);
    } else {
      const bool is_u = m.type == UniformMember::Type::u32;
      const double lo = is_u ? 0.0 : -2147483648.0, hi = is_u ? 4294967295.0 : 2147483647.0;
      if (v != std::floor(v) || v < lo || v > hi)
        throw std::runtime_error(cat("webgpu: kernel ", d.kernel, ": uniform '", m.name, "' = ", v,
                                     " is not a ", is_u ? "u32" : "i32"));
      bits = is_u ? uint32_t(v) : uint32_t(int32_t(v));
    }
    std::memcpy(out.data() + 4 * i, &bits, 4);
  }
  return out;
}

// The raw data of a run request: spans into the caller's buffers, zero-padded to 4-byte lengths.
class Blob {
 public:
  json add(std::span<const uint8_t> bytes) {
    const size_t at = size_;
    parts_.push_back(bytes);
    size_ += bytes.size();
    if (size_t pad = round4(bytes.size()) - bytes.size()) {
      parts_.push_back(std::span<const uint8_t>(kZeros, pad));
      size_ += pad;
    }
    return json::array({at, round4(bytes.size())});
  }
  json add(std::vector<uint8_t> owned) {
    owned_.push_back(std::move(owned));
    return add(std::span<const uint8_t>(owned_.back()));
  }
  const std::vector<std::span<const uint8_t>>& parts() const { return parts_; }

 private:
  static constexpr uint8_t kZeros[4] = {};
  std::vector<std::span<const uint8_t>> parts_;
  std::deque<std::vector<uint8_t>> owned_;  // a deque: spans into earlier elements stay valid
  size_t size_ = 0;
};

// A span of a buffer's initial bytes: [offset in the buffer, offset in the data, length].
json chunk(size_t buffer_offset, const json& data) { return json::array({buffer_offset, data[0], data[1]}); }

std::string text_of(const Frame& f) { return std::string(f.payload.begin(), f.payload.end()); }

}  // namespace

std::unique_ptr<WebGpuBackend> WebGpuBackend::create(const WebGpuOptions& options, std::string* why_not) {
  std::string why;
  auto fail = [&](std::string msg) -> std::unique_ptr<WebGpuBackend> {
    if (why_not) *why_not = std::move(msg);
    return nullptr;
  };
  const std::string node = find_node(options.node, &why);
  if (node.empty()) return fail("webgpu: " + why);
  const std::string modules = webgpu::find_modules_dir(options.modules, &why);
  if (modules.empty()) return fail(why);
  try {
    std::vector<std::string> argv = node_worker_argv(node, "gpu/webgpu/worker.mjs", {modules, find_layer_dir()});
    std::vector<std::string> flags = kDefaultToggles;
    flags.insert(flags.end(), options.dawn_toggles.begin(), options.dawn_toggles.end());
    std::unique_ptr<WebGpuBackend> b(new WebGpuBackend(options, std::move(argv), std::move(flags)));
    b->workers_.resize(1);
    b->start(0);  // no other thread yet: no lock
    const auto& caps = b->info_.capabilities;
    const bool cpu = std::find(caps.begin(), caps.end(), "device-type=cpu") != caps.end();
    const size_t n = options.workers ? options.workers : cpu ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency() / 2, 1, 8);
    if (n > 1) {
      b->workers_.resize(n);
      // The others start side by side (a Dawn device takes ~0.3 s to open); one that fails is
      // started again by the first case it gets, which reports why it cannot.
      std::vector<std::thread> starting;
      for (size_t i = 1; i < b->workers_.size(); ++i)
        starting.emplace_back([&b, i] {
          try {
            b->start(i);
          } catch (const std::exception&) {
          }
        });
      for (std::thread& t : starting) t.join();
    }
    return b;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

WebGpuBackend::WebGpuBackend(WebGpuOptions options, std::vector<std::string> argv, std::vector<std::string> flags)
    : GpuBackend(".wgsl"), options_(std::move(options)), argv_(std::move(argv)), flags_(std::move(flags)) {}

WebGpuBackend::~WebGpuBackend() = default;

pid_t WebGpuBackend::worker_pid() const {
  const size_t i = last_;
  std::lock_guard lock(workers_[i].locks->mu);
  return workers_[i].process ? workers_[i].process->pid() : -1;
}

size_t WebGpuBackend::route(const std::vector<std::string>& shader_keys) const {
  if (workers_.size() == 1) return 0;
  size_t h = 0;
  for (const std::string& k : shader_keys) h = h * 1000003u ^ std::hash<std::string>{}(k);
  return h % workers_.size();
}

std::shared_ptr<const WebGpuBackend::Program> WebGpuBackend::program(const Dispatch& d, const KernelText& kernel,
                                                                     DType dtype,
                                                                     const std::map<std::string, webgpu::TensorForm>& tensors) {
  const std::string& source = kernel.text;
  std::lock_guard lock(programs_mu_);
  auto di = decls_.find(source);
  if (di == decls_.end()) {
    if (decls_.size() >= 256) decls_.clear();  // kernel overrides in tests: keep the maps bounded
    di = decls_.emplace(source, webgpu::tensor_decls(source, kernel.file)).first;
  }
  const std::vector<webgpu::TensorDecl>& decls = di->second;
  std::vector<webgpu::TensorForm> forms;
  std::string key = cat(dtype_name(dtype), "\n");
  for (const std::string& def : d.defines) key += cat(def, "\n");
  for (const webgpu::TensorDecl& t : decls) {
    const std::string tensor = bound_tensor(d, t.name);
    auto bi = tensors.find(tensor);
    if (bi == tensors.end())
      throw std::runtime_error(cat("webgpu: kernel ", kernel.file, " line ", t.line, " declares '", t.name,
                                   "' for tensor '", tensor, "', which the case does not have"));
    forms.push_back(bi->second);
    key += cat(t.name, "=", layout_name(bi->second.layout), ":", dtype_name(bi->second.dtype), "\n");
  }
  key += cat(kernel.file, "\n", source);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;

  auto made = std::make_shared<Program>();
  Program& p = *made;
  p.decls = decls;
  bool f16 = dtype == DType::f16;
  for (const webgpu::TensorForm& f : forms) f16 = f16 || f.dtype == DType::f16;
  std::string pre = preamble(dtype, f16, d.subgroup != 0, d.cooperative_matrix, d.defines, packed_dot_);
  if (!decls.empty()) {
    webgpu::Expansion e;
    try {
      e = webgpu::expand(source, decls, forms);
    } catch (const std::invalid_argument& ex) {
      throw Unsupported("", cat("webgpu: kernel ", kernel.file, ": ", ex.what()));
    }
    pre += webgpu::accessor_library(f16) + e.functions;
    p.code = pre + e.kernel;
  } else {  // no declared tensors, no ts_meta: its invocations count forwards always
    pre += "fn ts_local_index(li: u32) -> u32 { return li; }\n";
    p.code = pre + source;
  }
  p.line0 = size_t(std::count(pre.begin(), pre.end(), '\n'));
  p.file = kernel.file;
  p.res = webgpu::reflect_wgsl(p.code, kernel.file);
  if (programs_.size() >= options_.program_cache) programs_.clear();
  return programs_.emplace(std::move(key), std::move(made)).first->second;
}

json WebGpuBackend::shader_json(const Program& prog, const Dispatch& d, uint32_t workgroup_size) {
  json layout = json::array();
  for (const auto& s : prog.res.storage) {
    using K = webgpu::StorageBinding::Kind;
    const std::string type = s.kind == K::texture           ? "texture:" + s.format
                             : s.kind == K::storage_texture ? "storage-texture:" + s.format
                             : s.writable                   ? "storage"
                                                            : "read-only-storage";
    layout.push_back({s.binding, type});
  }
  if (prog.res.uniform) layout.push_back({prog.res.uniform->binding, "uniform"});
  return {{"code", prog.code},
          {"name", prog.file},
          {"line0", prog.line0},
          {"wg", workgroup_size},
          {"layout", std::move(layout)}};
}

void WebGpuBackend::precompile(const std::vector<Dispatch>& plan, const std::map<std::string, Physical>& forms,
                               const std::map<std::string, DType>& dtypes, DType dtype) {
  if (dtype == DType::f16 && !limits_.f16) return;
  std::map<std::string, webgpu::TensorForm> tensors;
  for (auto& [name, ph] : forms) tensors[name] = {ph.layout, dtypes.at(name)};
  std::vector<std::string> keys;
  struct Shader {
    const Dispatch* d;
    uint32_t wg;
    std::shared_ptr<const Program> prog;
  };
  std::vector<Shader> shaders;
  for (const Dispatch& d : plan) {
    const std::optional<Grid> grid = dispatch_grid(d, workgroup_size, limits_);
    if (!grid) continue;
    try {
      std::shared_ptr<const Program> prog = program(d, kernels_.get(d.kernel), dtype, tensors);
      std::string key = shader_key(*prog, grid->workgroup_size);
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;  // as a RUN lists them: once
      keys.push_back(std::move(key));
      shaders.push_back({&d, grid->workgroup_size, std::move(prog)});
    } catch (const std::exception&) {
      // execute() meets it again and reports it as the case's outcome.
    }
  }
  if (shaders.empty()) return;
  Worker& w = workers_[route(keys)];
  {
    std::lock_guard queue(w.locks->queue_mu);
    // JSON only for the shaders new to this worker: warm runs every case.
    for (size_t i = 0; i < shaders.size(); ++i)
      if (w.prepared.insert(keys[i]).second) w.pending.push_back(shader_json(*shaders[i].prog, *shaders[i].d, shaders[i].wg));
    if (w.pending.empty()) return;
  }
  std::unique_lock lock(w.locks->mu, std::try_to_lock);
  if (!lock.owns_lock()) return;  // the thread holding the worker sends it (release())
  send_prepares(w);
  release(w, lock);
}

void WebGpuBackend::send_prepares(Worker& w) {
  json shaders = json::array();
  {
    std::lock_guard queue(w.locks->queue_mu);
    std::swap(shaders, w.pending);
  }
  if (shaders.empty() || !w.process) return;  // lost: the next run starts it afresh
  const std::string text = shaders.dump();
  try {
    w.process->post(FrameType::prepare, {{reinterpret_cast<const uint8_t*>(text.data()), text.size()}},
                    std::chrono::milliseconds(options_.timeout_ms));
  } catch (const WorkerLost&) {
    w.lost();
  }
}

void WebGpuBackend::release(Worker& w, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    send_prepares(w);
    lock.unlock();
    {
      std::lock_guard queue(w.locks->queue_mu);
      if (w.pending.empty()) return;
    }
    // Queued after the send above, by a thread that found `mu` taken: send it unless another holds it.
    if (!lock.try_lock()) return;
  }
}

void WebGpuBackend::Worker::lost() {
  process.reset();
  ran.clear();
  std::lock_guard queue(locks->queue_mu);
  prepared.clear();
  pending = json::array();
}

void WebGpuBackend::start(size_t i) {
  workers_[i].lost();
  // The worker's index names its own shader cache (worker.mjs, driverCachePerWorker).
  std::vector<std::string> argv = argv_;
  argv.push_back(std::to_string(i));
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  auto w = std::make_unique<WorkerProcess>(argv);
  Frame f = w->call(FrameType::info, {}, std::chrono::milliseconds(uint64_t(options_.timeout_ms) + options_.compile_timeout_ms));
  if (f.type != FrameType::info) {
    w->stop();
    std::string msg = f.type == FrameType::error ? text_of(f) : "webgpu: the worker answered INFO with a wrong frame";
    if (!w->stderr_tail().empty()) msg += cat("; worker stderr:\n", w->stderr_tail());
    throw std::runtime_error(msg);
  }
  if (i != 0 || !info_.backend.empty()) {  // the same adapter: worker 0's first INFO read its limits
    workers_[i].process = std::move(w);
    return;
  }
  const json j = json::parse(text_of(f));
  const json& lim = j.at("limits");
  const auto features = j.at("features").get<std::vector<std::string>>();
  const auto has = [&](const char* feat) { return std::find(features.begin(), features.end(), feat) != features.end(); };
  const uint32_t per_dim = lim.at("maxComputeWorkgroupsPerDimension");
  limits_.max_workgroups[0] = limits_.max_workgroups[1] = limits_.max_workgroups[2] = per_dim;
  limits_.max_workgroup_size_x = lim.at("maxComputeWorkgroupSizeX");
  limits_.max_invocations = lim.at("maxComputeInvocationsPerWorkgroup");
  // An output's binding runs on through its trailing guard, and its buffer holds a guard each side.
  const uint64_t binding = lim.at("maxStorageBufferBindingSize"), buffer = lim.at("maxBufferSize");
  limits_.max_buffer_bytes = std::min(binding, buffer - kGuardBytes) - kGuardBytes;
  max_buffer_size_ = buffer;
  limits_.f16 = has("shader-f16");
  limits_.bf16 = true;  // 32-bit words and rgba16uint images, converted in the accessors
  limits_.max_image_3d = lim.at("maxTextureDimension3D");
  limits_.subgroup = has("subgroups") ? j.at("adapter").value("subgroupMinSize", 0u) : 0u;
  // WGSL states no subgroup size: a kernel may run in any size from the adapter's least to its most.
  limits_.subgroup_max = has("subgroups") ? j.at("adapter").value("subgroupMaxSize", 0u) : 0u;
  const auto wgsl = j.value("wgslLanguageFeatures", std::vector<std::string>{});
  packed_dot_ = std::find(wgsl.begin(), wgsl.end(), "packed_4x8_integer_dot_product") != wgsl.end();
  limits_.int_dot = packed_dot_ && options_.int_dot;
  formats_.clear();
  for (auto& [format, why] : j.at("formats").items()) formats_[format] = why.is_null() ? "" : why.get<std::string>();

  const json& a = j.at("adapter");
  // Tensor cores: Dawn's subgroup matrices (behind allow_unsafe_apis, kDefaultToggles) in the shapes
  // the WGSL kernels multiply on (the GPU's VK_KHR_cooperative_matrix): int8 x int8 -> int32
  // 16x16x32 (q8ta_linear) and float16 x float16 -> float32 16x16x16 (sdpa).
  const auto shapes = a.value("subgroupMatrixConfigs", std::vector<std::string>{});
  std::string offered, lacking;
  for (const std::string& s : shapes) offered += (offered.empty() ? "" : " ") + s;
  for (const char* need : {"i8>i32:16x16x32", "f16>f32:16x16x16"})
    if (std::find(shapes.begin(), shapes.end(), need) == shapes.end()) lacking += cat(lacking.empty() ? "" : " and ", need);
  const bool coopmat = has("chromium-experimental-subgroup-matrix") && lacking.empty();
  limits_.no_coopmat = coopmat ? ""
                       : offered.empty()
                           ? "the adapter offers no cooperative (subgroup) matrices (Dawn's chromium-experimental-subgroup-matrix)"
                           : cat("the adapter's cooperative (subgroup) matrices lack ", lacking, " (it offers ", offered, ")");
  info_.backend = "webgpu";
  info_.name = "";
  for (const char* key : {"description", "device", "vendor"})
    if (info_.name.empty() && a.value(key, "") != "") info_.name = a.value(key, "");
  info_.capabilities.clear();
  for (const char* feat : {"shader-f16", "subgroups"})
    if (has(feat)) info_.capabilities.push_back(feat);
  if (limits_.bf16) info_.capabilities.push_back("bfloat16");
  if (a.contains("subgroupMinSize"))
    info_.capabilities.push_back(cat("subgroup-size=", a.value("subgroupMinSize", 0), "..", a.value("subgroupMaxSize", 0)));
  // int8 kernels' packed dot product: used, offered but turned off (WebGpuOptions::int_dot), or absent.
  if (packed_dot_) info_.capabilities.push_back(limits_.int_dot ? "int8-dot-product" : "int8-dot-product=off");
  if (coopmat) info_.capabilities.push_back("cooperative-matrix");
  for (const std::string& s : shapes) info_.capabilities.push_back(cat("subgroup-matrix=", s));
  info_.capabilities.push_back(cat("max-workgroups-per-dimension=", per_dim));
  info_.capabilities.push_back(cat("max-workgroup-size-x=", limits_.max_workgroup_size_x));
  info_.capabilities.push_back(cat("max-invocations-per-workgroup=", limits_.max_invocations));
  info_.capabilities.push_back(cat("max-storage-binding=", binding));
  info_.capabilities.push_back(cat("max-texture-3d=", limits_.max_image_3d));
  for (auto& [format, why] : formats_) info_.capabilities.push_back(cat(why.empty() ? "texture3d:" : "no-texture3d:", format));
  if (a.value("isFallbackAdapter", false)) info_.capabilities.push_back("fallback-adapter");
  // WebGPU exposes no adapter type; Dawn's software adapters are the fallback adapter, or Mesa's
  // llvmpipe (lavapipe) and SwiftShader behind its Vulkan backend. bench picks its sizes by this.
  const std::string desc = a.value("description", "") + " " + a.value("device", "") + " " + a.value("architecture", "");
  static const std::regex cpu_names("llvmpipe|lavapipe|swiftshader", std::regex::icase);
  if (a.value("isFallbackAdapter", false) || std::regex_search(desc, cpu_names))
    info_.capabilities.push_back("device-type=cpu");
  std::string flags;
  for (const json& fl : j.at("flags")) flags += cat(flags.empty() ? "" : " ", fl.get<std::string>());
  info_.capabilities.push_back(cat("dawn: ", flags));
  workers_[i].process = std::move(w);
}

Frame WebGpuBackend::call(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                          const TimingBudget* timing, std::vector<std::pair<size_t, std::string>>& snapshots) {
  if (dtype == DType::f16 && !limits_.f16)
    throw Unsupported("shader-f16", "webgpu: the adapter does not offer shader-f16, which float16 kernels need");

  std::optional<Phase> building(std::in_place, "webgpu: request (header, spans)");
  Blob blob;
  json head = {{"shaders", json::array()}, {"buffers", json::array()}, {"dispatches", json::array()}};
  std::map<std::string, size_t> buffer_index;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const HostBuffer& b = buffers[i];
    buffer_index[b.name] = i;
    if (!b.image()) {
      // Only the host's spans travel; guard bands and poison are filled by the worker (HostBuffer::fills).
      json init = json::array(), fill = json::array();
      for (auto [at, n] : b.uploads()) init.push_back(chunk(at, blob.add(std::span<const uint8_t>(b.bytes.data() + at, n))));
      for (const HostBuffer::Fill& f : b.fills) fill.push_back({f.offset, f.size, f.word});
      head["buffers"].push_back({{"size", padded_size(b.device_bytes())}, {"init", std::move(init)}, {"fill", std::move(fill)},
                                 {"read", b.read_back}});
      continue;
    }
    if (b.snapshot) throw std::runtime_error(cat("webgpu: scratch tensor ", b.name, " cannot be an image"));
    size_t texel = 0;
    const char* format = nullptr;
    try {
      format = webgpu::texture_format(b.dtype, &texel);
    } catch (const std::invalid_argument& e) {
      throw Unsupported("", cat("webgpu: tensor ", b.name, " as ", layout_name(b.phys.layout), ": ", e.what()));
    }
    auto f = formats_.find(format);
    if (f == formats_.end() || !f->second.empty())
      throw Unsupported(cat("texture3d:", format), cat("webgpu: tensor ", b.name, " as ", layout_name(b.phys.layout), " needs a 3-D ", format,
                            " texture (sampled and write-only storage), which Dawn refuses here: ",
                            f == formats_.end() ? "not probed" : f->second));
    head["buffers"].push_back({{"size", b.bytes.size()},
                               {"init", json::array({chunk(0, blob.add(std::span<const uint8_t>(b.bytes)))})},
                               {"read", b.read_back},
                               {"image", {{"format", format},
                                          {"extent", {b.phys.extent[0], b.phys.extent[1], b.phys.extent[2]}},
                                          {"texel", texel}}}});
  }

  // Everything read back shares one staging buffer, where an image's rows are 256 bytes apart: a
  // narrow image can need many times its own size there.
  uint64_t staging = 0;
  for (const HostBuffer& b : buffers)
    if (b.read_back || b.snapshot) staging += result_size(b) * (b.snapshot ? 2 : 1);
  if (staging > max_buffer_size_)
    throw Unsupported("", cat("webgpu: reading this case back needs a ", staging, "-byte staging buffer (image rows are ",
                          "256-byte aligned), over the device's maxBufferSize (", max_buffer_size_, ")"));

  std::map<std::string, webgpu::TensorForm> tensor_forms;
  for (const HostBuffer& b : buffers) tensor_forms[b.name] = {b.phys.layout, b.dtype};
  std::map<std::string, size_t> shader_index;  // by WGSL text and workgroup size
  std::vector<std::string> keys;                // shader_index's keys in order: route()'s
  std::map<std::vector<uint32_t>, size_t> metas;  // ts_meta contents -> buffer index
  size_t uniforms = 0;
  std::vector<bool> snapped(buffers.size(), false);
  for (const Dispatch& d : plan) {
    const std::optional<Grid> grid = dispatch_grid(d, workgroup_size, limits_);
    if (!grid) throw std::runtime_error(cat("webgpu: dispatch ", d.kernel, " does not fit the device grid"));
    const std::shared_ptr<const Program> held = program(d, kernels_.get(d.kernel), dtype, tensor_forms);
    const Program& prog = *held;
    const WgslResources& res = prog.res;
    const std::string key = shader_key(prog, grid->workgroup_size);
    auto [it, fresh] = shader_index.emplace(key, shader_index.size());
    if (fresh) keys.push_back(key);
    if (fresh) head["shaders"].push_back(shader_json(prog, d, grid->workgroup_size));
    // The accessors' dims: one ts_meta buffer per distinct content in the case.
    size_t meta_index = 0;
    if (!prog.decls.empty()) {
      std::vector<std::pair<uint32_t, const HostBuffer*>> bound;
      for (const auto& t : prog.decls) bound.emplace_back(t.binding, &buffers[buffer_index.at(bound_tensor(d, t.name))]);
      std::vector<uint32_t> meta = accessor_meta(bound, lane_xor(d, grid->workgroup_size));
      auto [m, added] = metas.emplace(std::move(meta), head["buffers"].size());
      if (added) {
        const auto* raw = reinterpret_cast<const uint8_t*>(m->first.data());
        head["buffers"].push_back({{"size", padded_size(m->first.size() * 4)},
                                   {"init", json::array({chunk(0, blob.add(std::span<const uint8_t>(raw, m->first.size() * 4)))})},
                                   {"read", false}});
      }
      meta_index = m->second;
    }
    json binds = json::array(), snaps = json::array();
    for (const auto& s : res.storage) {
      if (s.binding == kMetaBinding && s.array == "ts_meta" && !prog.decls.empty()) {
        binds.push_back({s.binding, meta_index, 0, head["buffers"][meta_index]["size"]});
        continue;
      }
      const std::string tensor = bound_tensor(d, s.array);
      auto bi = buffer_index.find(tensor);
      if (bi == buffer_index.end())
        throw std::runtime_error(cat("webgpu: kernel ", prog.file, " binds '", s.array, "' to tensor '", tensor,
                                     "', which the case does not have"));
      const HostBuffer& hb = buffers[bi->second];
      if (hb.image() != (s.kind != webgpu::StorageBinding::Kind::buffer))
        throw std::runtime_error(cat("webgpu: kernel ", prog.file, " binds '", s.array, "' as ",
                                     hb.image() ? "a buffer" : "a texture", ", but tensor '", tensor, "' is ",
                                     layout_name(hb.phys.layout), " in this case (declare it with TS_INPUT / TS_OUTPUT)"));
      binds.push_back({s.binding, bi->second, hb.offset, padded_size(hb.size)});
      if (hb.snapshot && !snapped[bi->second]) {
        snapped[bi->second] = true;
        snaps.push_back(bi->second);
        snapshots.emplace_back(bi->second, d.kernel);
      }
    }
    json dispatch = {{"shader", it->second},
                     {"groups", {grid->groups[0], grid->groups[1], grid->groups[2]}},
                     {"binds", std::move(binds)},
                     {"uniform", nullptr},
                     {"snapshots", std::move(snaps)}};
    if (res.uniform) {
      dispatch["uniform"] = {{"binding", res.uniform->binding}, {"bytes", blob.add(uniform_bytes(*res.uniform, d))}};
      ++uniforms;
    }
    head["dispatches"].push_back(std::move(dispatch));
  }

  if (timing)
    head["timing"] = {{"warmup", timing->warmup},
                      {"warmupMs", timing->warmup_seconds * 1000},
                      {"minReps", timing->min_reps},
                      {"maxReps", timing->max_reps},
                      {"maxMs", timing->max_seconds * 1000},
                      {"stream", timing->stream},
                      {"untimed", timing->untimed}};
  const std::string header = head.dump();
  const uint32_t header_len = uint32_t(header.size());
  std::vector<std::span<const uint8_t>> parts = {
      {reinterpret_cast<const uint8_t*>(&header_len), 4},
      {reinterpret_cast<const uint8_t*>(header.data()), header.size()}};
  parts.insert(parts.end(), blob.parts().begin(), blob.parts().end());

  allocations += buffers.size() + metas.size() + uniforms;
  dispatches += plan.size();
  building.reset();
  const size_t i = route(keys);
  Worker& w = workers_[i];
  Phase ph("webgpu: worker round trip");
  std::unique_lock lock(w.locks->mu);
  struct Release {
    WebGpuBackend* b;
    Worker& w;
    std::unique_lock<std::mutex>& lock;
    ~Release() { b->release(w, lock); }
  } releasing{this, w, lock};
  last_ = i;
  // A worker lost in an earlier case is replaced here, before anything of this case is sent.
  if (!w.process) start(i);
  send_prepares(w);  // compiled while this RUN is served
  Frame reply;
  // Shaders new to this worker are compiled while the request is served: a slow compile on a
  // loaded machine is not a slow kernel.
  const bool compiles = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) { return !w.ran.count(k); });
  try {
    // Timing runs until its budget is spent: the worker gets that on top of the usual timeout.
    const auto limit = std::chrono::milliseconds(options_.timeout_ms) +
                       std::chrono::milliseconds(compiles ? options_.compile_timeout_ms : 0) +
                       std::chrono::milliseconds(timing ? uint64_t(timing->max_seconds * 1000) * 2 : 0);
    reply = w.process->call(timing ? FrameType::time : FrameType::run, parts, limit);
  } catch (const WorkerLost& e) {
    w.lost();
    if (!compiles) throw;
    throw WorkerLost(cat(e.what(), " (the request compiled shaders new to the worker: a compile budget of ",
                         options_.compile_timeout_ms, " ms was on top of --timeout-ms)"));
  }
  if (reply.type != FrameType::error)
    for (const std::string& k : keys) ++(w.ran.insert(k).second ? pipelines_new : pipelines_reused);
  if (reply.type == FrameType::error) throw std::runtime_error(text_of(reply));
  const FrameType want = timing ? FrameType::times : FrameType::result;
  if (reply.type != want) throw std::runtime_error("webgpu: the worker answered with a wrong frame");
  return reply;
}

void WebGpuBackend::execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype) {
  std::vector<std::pair<size_t, std::string>> snapshots;  // (buffer, kernel after which it is copied)
  Frame reply = call(plan, buffers, dtype, nullptr, snapshots);
  Phase ph("webgpu: results");

  size_t want = 0;
  for (const HostBuffer& b : buffers)
    if (b.read_back) want += result_size(b);
  for (auto& [index, kernel] : snapshots) want += result_size(buffers[index]);
  if (reply.payload.size() != want)
    throw std::runtime_error(cat("webgpu: the worker returned ", reply.payload.size(), " bytes, expected ", want));
  const uint8_t* at = reply.payload.data();
  for (HostBuffer& b : buffers) {
    if (!b.read_back) continue;
    take_result(b, at, b.bytes.data());
    at += result_size(b);
  }
  for (auto& [index, kernel] : snapshots) {
    HostBuffer& b = buffers[index];
    b.first_use.resize(b.bytes.size());
    take_result(b, at, b.first_use.data());
    b.first_kernel = kernel;
    at += result_size(b);
  }
}

PlanTiming WebGpuBackend::time_plan(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype,
                                    const TimingBudget& budget) {
  for (HostBuffer& b : buffers) b.read_back = false;  // nothing comes back but the times
  std::vector<std::pair<size_t, std::string>> snapshots;
  Frame reply = call(plan, buffers, dtype, &budget, snapshots);
  if (reply.payload.size() % sizeof(double))
    throw std::runtime_error(cat("webgpu: the worker returned ", reply.payload.size(), " bytes of times"));
  PlanTiming out{std::vector<double>(reply.payload.size() / sizeof(double)), {},
                 "WebGPU exposes no compiled-kernel statistics"};
  if (!out.seconds.empty()) std::memcpy(out.seconds.data(), reply.payload.data(), reply.payload.size());
  return out;
}

}  // namespace ts
