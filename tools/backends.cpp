#include "tools/backends.h"

#include <algorithm>
#include <cstdio>
#include <future>

#include "core/contract.h"
#include "core/profile.h"
#include "gpu/ggml/ggml_backend.h"
#include "gpu/ort/ort_backend.h"
#include "gpu/vulkan/vulkan_backend.h"
#ifdef TS_HAVE_WEBGPU
#include "gpu/webgpu/webgpu_backend.h"
#endif

namespace ts {

const std::vector<std::string>& known_backends() {
  // Touchstone's kernels, then the foreign ones (third-party kernels: gpu/foreign/foreign_backend.h).
  static const std::vector<std::string> names = {"vulkan", "webgpu", "ggml-vulkan", "ort-webgpu"};
  return names;
}

const std::vector<std::string>& kernel_backends() {
  static const std::vector<std::string> names = {"vulkan", "webgpu"};
  return names;
}

namespace {
std::string known_list() {
  std::string s;
  for (const std::string& n : known_backends()) s += (s.empty() ? "" : ", ") + n;
  return s;
}
}  // namespace

std::vector<std::string> backend_names(const BackendOptions& o) {
  const auto& known = known_backends();
  for (const std::string& n : o.names) {
    if (n == "all" && o.names.size() > 1) throw UsageError("--backend all names every backend; name no other beside it");
    if (n != "all" && std::find(known.begin(), known.end(), n) == known.end())
      throw UsageError(cat("unknown backend '", n, "' (known: ", known_list(), ", all)"));
  }
  // --kernels replaces Touchstone's kernels, and bench times them through the backend's own dispatch
  // chains: the foreign backends run their libraries' kernels in a worker instead.
  if (!o.kernels.dir.empty() || o.own_kernels) {
    const auto& own = kernel_backends();
    const char* why = !o.kernels.dir.empty() ? "--kernels replaces Touchstone's kernels"
                                             : "bench times Touchstone's kernels (its dispatch chains, between GPU timestamps)";
    for (const std::string& n : o.names)
      if (n != "all" && std::find(own.begin(), own.end(), n) == own.end())
        throw UsageError(cat(why, ", and backend '", n, "' runs a library's own: name vulkan or webgpu"));
    return o.names.empty() || o.names[0] == "all" ? own : o.names;
  }
  return o.names.empty() || o.names[0] == "all" ? known : o.names;
}

namespace {
// The user's kernels of this backend's language replace the built-in ones (--kernels DIR).
template <class B>
std::unique_ptr<B> with_kernels(std::unique_ptr<B> b, const KernelDir& kernels, const char* ext) {
  if (b)
    for (const KernelFile& f : kernels.files)
      if (f.ext == ext) b->set_kernel_source(f.kernel, f.text, f.path);
  return b;
}
}  // namespace

std::unique_ptr<Backend> open_backend(const std::string& name, const BackendOptions& opt, std::string* why_not) {
  std::unique_ptr<Backend> b;
  if (name == "vulkan") {
    VulkanOptions o;
    o.device = opt.device;
    o.validation = opt.validation;
    o.timeout_ms = opt.timeout_ms;
    o.compile_timeout_ms = opt.compile_timeout_ms;
    o.int_dot = opt.int_dot;
    o.kernel_stats = opt.kernel_stats;
    b = with_kernels(VulkanBackend::create(o, why_not), opt.kernels, ".comp");
  } else if (name == "webgpu") {
#ifdef TS_HAVE_WEBGPU
    WebGpuOptions o;
    // Dawn names its Vulkan adapters by the Vulkan device name, so --device is resolved the way the
    // Vulkan backend resolves it (index or case-insensitive substring) and Dawn asked for that name.
    if (!opt.device.empty()) {
      const std::string device = VulkanBackend::device_name(opt.device, why_not);
      if (device.empty()) {
        *why_not = cat("--device '", opt.device, "': ", *why_not);
        return nullptr;
      }
      o.dawn_toggles.push_back("adapter=" + device);
    }
    o.timeout_ms = opt.timeout_ms;
    o.compile_timeout_ms = opt.compile_timeout_ms;
    o.int_dot = opt.int_dot;
    b = with_kernels(WebGpuBackend::create(o, why_not), opt.kernels, ".wgsl");
#else
    *why_not = "this build has no WebGPU backend";
#endif
  } else if (name == "ggml-vulkan") {
    GgmlOptions o;
    o.device = VulkanBackend::device_index(opt.device, why_not);
    if (o.device < 0) {
      *why_not = cat("ggml-vulkan: ", opt.device.empty() ? "" : cat("--device '", opt.device, "': "), *why_not);
      return nullptr;
    }
    o.timeout_ms = opt.timeout_ms + opt.compile_timeout_ms;  // a library compiles on first use, inside its call
    b = open_ggml_vulkan(o, why_not);
  } else if (name == "ort-webgpu") {
    // ORT picks its own WebGPU adapter (onnxruntime-node names none): --device cannot steer it.
    if (!opt.device.empty()) {
      *why_not = cat("ort-webgpu: --device '", opt.device, "' cannot be honoured: onnxruntime-node chooses its WebGPU adapter itself");
      return nullptr;
    }
    OrtOptions o;
    o.timeout_ms = opt.timeout_ms + opt.compile_timeout_ms;
    b = open_ort_webgpu(o, why_not);
  } else {
    throw UsageError(cat("unknown backend '", name, "' (known: ", known_list(), ", all)"));
  }
  if (!b && why_not->empty()) *why_not = "not available";
  return b;
}

std::vector<BackendSlot> open_backends(const BackendOptions& o) {
  const bool all = o.names.empty() || o.names[0] == "all";
  std::vector<BackendSlot> slots;
  for (const std::string& n : backend_names(o)) {
    BackendSlot s;
    s.name = n;
    s.requested = !all;
    slots.push_back(std::move(s));
  }
  // Opened at once, each on its own thread: most of a backend's start is waiting (a GPU driver
  // initialising the device, the Dawn worker's Node start and its device), and on an NVIDIA
  // machine the two start-ups then overlap instead of adding up.
  std::vector<std::future<void>> opening;
  for (BackendSlot& s : slots)
    opening.push_back(std::async(std::launch::async, [&s, &o] {
      Phase ph(s.name == "vulkan" ? "open: vulkan" : s.name == "webgpu" ? "open: webgpu" : "open: foreign");
      s.backend = open_backend(s.name, o, &s.unavailable);
    }));
  for (auto& f : opening) f.get();
  return slots;
}

int report_backends(const std::vector<BackendSlot>& slots, const char* none_hint) {
  int usable = 0;
  for (auto& s : slots) {
    if (s.backend) {
      std::printf("backend %-7s %s\n", s.name.c_str(), s.backend->info().name.c_str());
      ++usable;
    } else {
      std::printf("backend %-7s UNAVAILABLE: %s\n", s.name.c_str(), s.unavailable.c_str());
    }
  }
  std::fflush(stdout);
  for (auto& s : slots)
    if (!s.backend && s.requested)
      return std::fprintf(stderr, "error: backend %s is unavailable: %s\n", s.name.c_str(), s.unavailable.c_str()), 2;
  if (!usable)
    return std::fprintf(stderr, "error: no GPU backend is available on this machine, so nothing would be checked%s\n",
                        none_hint), 2;
  return 0;
}

void print_kernels(const KernelDir& kernels) {
  if (kernels.dir.empty()) return;
  std::printf("kernels: %s\n", kernels.describe().c_str());
  std::fflush(stdout);
}

nlohmann::json kernels_json(const KernelDir& kernels) {
  if (kernels.dir.empty()) return nullptr;
  nlohmann::json files = nlohmann::json::array();
  for (const KernelFile& f : kernels.files)
    files.push_back({{"kernel", f.kernel}, {"backend", f.backend()}, {"file", f.path}});
  return {{"dir", kernels.dir}, {"files", files}};
}

}  // namespace ts
