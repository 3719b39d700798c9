#include "gpu/kernel_sources.h"

#include <stdexcept>

#include "core/contract.h"
#include "core/embedded.h"

namespace ts {

std::string builtin_kernel_dir(std::string_view ext) {
  if (ext == ".comp") return "gpu/vulkan/shaders/";
  if (ext == ".wgsl") return "gpu/webgpu/shaders/";
  throw std::invalid_argument(cat("no kernel language '", ext, "' (.comp, .wgsl)"));
}

std::vector<std::string> builtin_kernels(std::string_view ext) {
  const std::string dir = builtin_kernel_dir(ext);
  std::vector<std::string> stems;
  for (auto& [path, text] : embedded_files()) {
    if (path.size() <= dir.size() + ext.size() || path.compare(0, dir.size(), dir) != 0) continue;
    if (path.compare(path.size() - ext.size(), ext.size(), ext) != 0) continue;
    const std::string stem = path.substr(dir.size(), path.size() - dir.size() - ext.size());
    if (stem.find('/') == std::string::npos) stems.push_back(stem);
  }
  return stems;  // embedded_files() is a sorted map
}

void KernelSources::set(const std::string& kernel, std::string text, std::string file) {
  std::lock_guard lock(mu_);
  if (text.empty()) {
    replaced_.erase(kernel);
    return;
  }
  replaced_[kernel] = {std::move(text), file.empty() ? kernel + ext_ : std::move(file)};
}

KernelText KernelSources::get(const std::string& kernel) const {
  std::lock_guard lock(mu_);
  if (auto it = replaced_.find(kernel); it != replaced_.end()) return {it->second.text, it->second.file, true};
  return {std::string(embedded(builtin_kernel_dir(ext_) + kernel + ext_)), kernel + ext_, false};
}

std::string KernelSources::file(const std::string& kernel) const {
  std::lock_guard lock(mu_);
  auto it = replaced_.find(kernel);
  return it != replaced_.end() ? it->second.file : kernel + ext_;
}

bool KernelSources::any_replaced() const {
  std::lock_guard lock(mu_);
  return !replaced_.empty();
}

bool KernelSources::replaced(const std::string& kernel) const {
  std::lock_guard lock(mu_);
  return replaced_.count(kernel) != 0;
}

}  // namespace ts
