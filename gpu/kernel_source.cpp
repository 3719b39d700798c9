#include "gpu/kernel_source.h"

#include <set>
#include <stdexcept>

#include "core/contract.h"
#include "gpu/embedded.h"

namespace ts {
namespace {

// The file name of an `#include "name"` line, or nullopt for any other line.
std::optional<std::string> include_of(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, 8) != "#include") return std::nullopt;
  i = line.find_first_not_of(" \t", i + 8);
  if (i == std::string_view::npos || line[i] != '"') return std::nullopt;
  const size_t end = line.find('"', i + 1);
  if (end == std::string_view::npos || line.find_first_not_of(" \t\r", end + 1) != std::string_view::npos) return std::nullopt;
  return std::string(line.substr(i + 1, end - i - 1));
}

void resolve(std::string_view source, const std::string& dir, const std::string& what, const IncludeReader& read,
             std::set<std::string>& seen, std::string& out) {
  size_t at = 0;
  while (at < source.size()) {
    size_t nl = source.find('\n', at);
    const size_t end = nl == std::string_view::npos ? source.size() : nl + 1;
    const std::string_view line = source.substr(at, end - at);
    at = end;
    const std::optional<std::string> name = include_of(line.substr(0, line.size() - (line.ends_with('\n') ? 1 : 0)));
    if (!name) {
      out += line;
      continue;
    }
    if (!seen.insert(*name).second) {
      out += "\n";  // included already: keeps the line count of what follows
      continue;
    }
    std::optional<std::string> text;
    if (read) {
      text = read(*name);
    } else if (embedded_files().count(dir + *name)) {
      text = std::string(embedded(dir + *name));
    }
    if (!text) throw std::runtime_error(what + ": #include \"" + *name + "\": no such file " + dir + *name);
    resolve(*text, dir, what, read, seen, out);
    if (!out.empty() && out.back() != '\n') out += "\n";
  }
}

}  // namespace

std::string resolve_includes(std::string_view source, const std::string& dir, const std::string& what,
                             const IncludeReader& read) {
  std::set<std::string> seen;
  std::string out;
  out.reserve(source.size());
  resolve(source, dir, what, read, seen, out);
  return out;
}

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
    // WGSL includes are .wgsl files too: a kernel is a stem with a kernel in both languages (every
    // operator has one GLSL and one WGSL kernel), never a shared include.
    if (stem.find('/') == std::string::npos &&
        (ext == ".comp" || embedded_files().count(builtin_kernel_dir(".comp") + stem + ".comp")))
      stems.push_back(stem);
  }
  return stems;  // embedded_files() is a sorted map
}

void KernelSources::set(const std::string& kernel, std::string text, std::string file) {
  std::lock_guard lock(mu_);
  std::erase_if(mentions_, [&](const auto& m) { return m.first.first == kernel; });
  if (text.empty()) {
    replaced_.erase(kernel);
    return;
  }
  replaced_[kernel] = {std::move(text), file.empty() ? kernel + ext_ : std::move(file)};
}

KernelText KernelSources::get(const std::string& kernel) const {
  std::lock_guard lock(mu_);
  const std::string dir = builtin_kernel_dir(ext_);
  if (auto it = replaced_.find(kernel); it != replaced_.end())
    return {resolve_includes(it->second.text, dir, it->second.file), it->second.file, true};
  return {resolve_includes(embedded(dir + kernel + ext_), dir, kernel + ext_), kernel + ext_, false};
}

bool KernelSources::has(const std::string& kernel) const {
  std::lock_guard lock(mu_);
  return replaced_.count(kernel) || embedded_files().count(builtin_kernel_dir(ext_) + kernel + ext_);
}

bool KernelSources::mentions(const std::string& kernel, const std::string& word) const {
  {
    std::lock_guard lock(mu_);
    if (auto it = mentions_.find({kernel, word}); it != mentions_.end()) return it->second;
  }
  bool found = false;
  try {
    found = get(kernel).text.find(word) != std::string::npos;
  } catch (const std::exception&) {
    return false;  // compiling it reports what is missing
  }
  std::lock_guard lock(mu_);
  mentions_[{kernel, word}] = found;
  return found;
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
