#include "gpu/webgpu/webgpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "core/contract.h"
#include "core/embedded.h"
#include "gpu/webgpu/locate.h"
#include "gpu/webgpu/worker_process.h"

namespace ts {

using webgpu::Frame;
using webgpu::FrameType;
using webgpu::UniformMember;
using webgpu::WgslResources;
using webgpu::WorkerLost;
using webgpu::WorkerProcess;
using json = nlohmann::json;

namespace {

// NVIDIA's Vulkan driver offers shader-f16 only with this toggle (ENVIRONMENT.md); others ignore it.
// Not disable_robustness: lavapipe and NVIDIA's driver drop writes outside a binding's range with or
// without it (measured), so past-the-end writes are seen only through GpuBackend binding outputs up
// to the end of their trailing guard, which robust access leaves intact.
const std::vector<std::string> kDefaultToggles = {"vulkan_enable_f16_on_nvidia"};

size_t round4(size_t n) { return (n + 3) & ~size_t(3); }

// WebGPU buffer and binding sizes are whole 4-byte words, never 0; the bytes past a tensor's end
// up to the word boundary belong to its guard band (GpuBackend checks them).
size_t padded_size(size_t bytes) { return std::max<size_t>(4, round4(bytes)); }

// What every kernel sees before its own text (WGSL has no preprocessor): the storage type, the
// workgroup size as a pipeline-overridable constant, the plan's variant defines as constants, and
// the linear id of a grid that fold_grid() folded x first, then y (gpu/gpu_backend.cpp).
std::string preamble(DType dtype, const std::vector<std::string>& defines) {
  std::string s;
  if (dtype == DType::f16) s += "enable f16;\n";
  // int8 kernels address packed 32-bit words themselves: they get no DTYPE.
  if (dtype == DType::f32) s += "alias DTYPE = f32;\n";
  if (dtype == DType::f16) s += "alias DTYPE = f16;\n";
  if (dtype == DType::i32) s += "alias DTYPE = i32;\n";
  s += "override WG: u32 = 64;\n";
  for (const std::string& d : defines) {
    size_t eq = d.find('=');
    s += cat("const ", d.substr(0, eq), " = ", eq == std::string::npos ? "1" : d.substr(eq + 1), ";\n");
  }
  s += "fn ts_linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {\n"
       "  return gid.x + nwg.x * WG * (gid.y + nwg.y * gid.z);\n"
       "}\n";
  return s;
}

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

std::string text_of(const Frame& f) { return std::string(f.payload.begin(), f.payload.end()); }

}  // namespace

std::unique_ptr<WebGpuBackend> WebGpuBackend::create(const WebGpuOptions& options, std::string* why_not) {
  std::string why;
  auto fail = [&](std::string msg) -> std::unique_ptr<WebGpuBackend> {
    if (why_not) *why_not = std::move(msg);
    return nullptr;
  };
  const std::string node = webgpu::find_node(options.node, &why);
  if (node.empty()) return fail(why);
  const std::string modules = webgpu::find_modules_dir(options.modules, &why);
  if (modules.empty()) return fail(why);
  try {
    std::vector<std::string> argv = {node, "--input-type=module", "-e",
                                     std::string(embedded("gpu/webgpu/worker.mjs")), "--", modules};
    argv.insert(argv.end(), kDefaultToggles.begin(), kDefaultToggles.end());
    argv.insert(argv.end(), options.dawn_toggles.begin(), options.dawn_toggles.end());
    std::unique_ptr<WebGpuBackend> b(new WebGpuBackend(options, std::move(argv)));
    b->start();
    return b;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

WebGpuBackend::WebGpuBackend(WebGpuOptions options, std::vector<std::string> argv)
    : options_(std::move(options)), argv_(std::move(argv)) {}

WebGpuBackend::~WebGpuBackend() = default;

pid_t WebGpuBackend::worker_pid() const { return worker_ ? worker_->pid() : -1; }

void WebGpuBackend::set_kernel_source(const std::string& kernel, std::string source) {
  if (source.empty()) kernel_overrides_.erase(kernel);
  else kernel_overrides_[kernel] = std::move(source);
}

std::string WebGpuBackend::kernel_source(const std::string& kernel) const {
  auto it = kernel_overrides_.find(kernel);
  if (it != kernel_overrides_.end()) return it->second;
  return std::string(embedded("gpu/webgpu/shaders/" + kernel + ".wgsl"));
}

const WgslResources& WebGpuBackend::resources(const std::string& kernel, const std::string& source) {
  auto it = reflected_.find(source);
  if (it == reflected_.end()) it = reflected_.emplace(source, webgpu::reflect_wgsl(source, kernel)).first;
  return it->second;
}

void WebGpuBackend::start() {
  worker_.reset();
  auto w = std::make_unique<WorkerProcess>(argv_);
  Frame f = w->call(FrameType::info, {}, std::chrono::milliseconds(options_.timeout_ms));
  if (f.type != FrameType::info) {
    w->stop();
    std::string msg = f.type == FrameType::error ? text_of(f) : "webgpu: the worker answered INFO with a wrong frame";
    if (!w->stderr_tail().empty()) msg += cat("; worker stderr:\n", w->stderr_tail());
    throw std::runtime_error(msg);
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
  limits_.f16 = has("shader-f16");

  const json& a = j.at("adapter");
  info_.backend = "webgpu";
  info_.name = "";
  for (const char* key : {"description", "device", "vendor"})
    if (info_.name.empty() && a.value(key, "") != "") info_.name = a.value(key, "");
  info_.capabilities.clear();
  for (const char* feat : {"shader-f16", "subgroups"})
    if (has(feat)) info_.capabilities.push_back(feat);
  if (a.contains("subgroupMinSize"))
    info_.capabilities.push_back(cat("subgroup-size=", a.value("subgroupMinSize", 0), "..", a.value("subgroupMaxSize", 0)));
  info_.capabilities.push_back(cat("max-workgroups-per-dimension=", per_dim));
  info_.capabilities.push_back(cat("max-workgroup-size-x=", limits_.max_workgroup_size_x));
  info_.capabilities.push_back(cat("max-invocations-per-workgroup=", limits_.max_invocations));
  info_.capabilities.push_back(cat("max-storage-binding=", binding));
  if (a.value("isFallbackAdapter", false)) info_.capabilities.push_back("fallback-adapter");
  std::string flags;
  for (const json& fl : j.at("flags")) flags += cat(flags.empty() ? "" : " ", fl.get<std::string>());
  info_.capabilities.push_back(cat("dawn: ", flags));
  worker_ = std::move(w);
}

void WebGpuBackend::execute(const std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, DType dtype) {
  if (dtype == DType::f16 && !limits_.f16)
    throw Unsupported("webgpu: the adapter does not offer shader-f16, which float16 kernels need");
  // A worker lost in an earlier case is replaced here, before anything of this case is sent.
  if (!worker_) start();

  Blob blob;
  json head = {{"shaders", json::array()}, {"buffers", json::array()}, {"dispatches", json::array()}};
  std::map<std::string, size_t> buffer_index;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const HostBuffer& b = buffers[i];
    buffer_index[b.name] = i;
    head["buffers"].push_back({{"size", padded_size(b.bytes.size())}, {"init", blob.add(b.bytes)}, {"read", b.read_back}});
  }

  std::map<std::string, size_t> shader_index;  // by WGSL text and workgroup size
  size_t uniforms = 0;
  std::vector<std::pair<size_t, std::string>> snapshots;  // (buffer, kernel after which it is copied)
  std::vector<bool> snapped(buffers.size(), false);
  for (const Dispatch& d : plan) {
    const std::optional<Grid> grid = fold_grid(d.invocations, workgroup_size, limits_);
    if (!grid) throw std::runtime_error(cat("webgpu: dispatch ", d.kernel, " does not fit the device grid"));
    const std::string source = kernel_source(d.kernel);
    const WgslResources& res = resources(d.kernel, source);
    const std::string pre = preamble(dtype, d.defines);
    const std::string code = pre + source;
    const std::string key = cat(grid->workgroup_size, "\n", code);
    auto [it, fresh] = shader_index.emplace(key, shader_index.size());
    if (fresh) {
      json layout = json::array();
      for (const auto& s : res.storage) layout.push_back({s.binding, s.writable ? "storage" : "read-only-storage"});
      if (res.uniform) layout.push_back({res.uniform->binding, "uniform"});
      head["shaders"].push_back({{"code", code},
                                 {"name", d.kernel + ".wgsl"},
                                 {"line0", std::count(pre.begin(), pre.end(), '\n')},
                                 {"wg", grid->workgroup_size},
                                 {"layout", std::move(layout)}});
    }
    json binds = json::array(), snaps = json::array();
    for (const auto& s : res.storage) {
      const std::string tensor = bound_tensor(d, s.array);
      auto bi = buffer_index.find(tensor);
      if (bi == buffer_index.end())
        throw std::runtime_error(cat("webgpu: kernel ", d.kernel, " binds '", s.array, "' to tensor '", tensor,
                                     "', which the case does not have"));
      const HostBuffer& hb = buffers[bi->second];
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

  const std::string header = head.dump();
  const uint32_t header_len = uint32_t(header.size());
  std::vector<std::span<const uint8_t>> parts = {
      {reinterpret_cast<const uint8_t*>(&header_len), 4},
      {reinterpret_cast<const uint8_t*>(header.data()), header.size()}};
  parts.insert(parts.end(), blob.parts().begin(), blob.parts().end());

  allocations += buffers.size() + uniforms;
  dispatches += plan.size();
  Frame reply;
  try {
    reply = worker_->call(FrameType::run, parts, std::chrono::milliseconds(options_.timeout_ms));
  } catch (const WorkerLost&) {
    worker_.reset();  // the next case starts a fresh worker
    throw;
  }
  if (reply.type == FrameType::error) throw std::runtime_error(text_of(reply));
  if (reply.type != FrameType::result) throw std::runtime_error("webgpu: the worker answered RUN with a wrong frame");

  size_t want = 0;
  for (const HostBuffer& b : buffers)
    if (b.read_back) want += padded_size(b.bytes.size());
  for (auto& [index, kernel] : snapshots) want += padded_size(buffers[index].bytes.size());
  if (reply.payload.size() != want)
    throw std::runtime_error(cat("webgpu: the worker returned ", reply.payload.size(), " bytes, expected ", want));
  const uint8_t* at = reply.payload.data();
  for (HostBuffer& b : buffers) {
    if (!b.read_back) continue;
    if (!b.bytes.empty()) std::memcpy(b.bytes.data(), at, b.bytes.size());  // an empty vector's data() may be null
    at += padded_size(b.bytes.size());
  }
  for (auto& [index, kernel] : snapshots) {
    HostBuffer& b = buffers[index];
    b.first_use.assign(at, at + b.bytes.size());
    b.first_kernel = kernel;
    at += padded_size(b.bytes.size());
  }
}

}  // namespace ts
