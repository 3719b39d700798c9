#include "tools/kernel_dir.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/contract.h"
#include "core/errors.h"
#include "gpu/kernel_source.h"

namespace ts {

namespace fs = std::filesystem;

std::string KernelDir::describe() const {
  std::string names;
  for (const KernelFile& f : files) names += cat(names.empty() ? "" : ", ", f.kernel, f.ext);
  return cat(dir, " (", names, ")");
}

KernelUse::KernelUse(const KernelDir& d) {
  for (const KernelFile& f : d.files) files.push_back({f.path, f.kernel, f.backend()});
}

void KernelUse::count(const std::string& backend, const std::string& ran) {
  for (File& f : files) {
    if (backend != f.backend) continue;
    for (size_t at = 0; at < ran.size();) {
      const size_t end = std::min(ran.find(" + ", at), ran.size());
      if (ran.compare(at, end - at, f.kernel) == 0) {
        f.cases++;
        break;
      }
      at = end + 3;
    }
  }
}

void KernelUse::print() const {
  if (files.empty()) return;
  std::string line;
  for (const File& f : files) line += cat(line.empty() ? "" : ", ", f.path, " ", f.cases);
  std::printf("\nYour kernels (--kernels; cases that ran each): %s\n", line.c_str());
  for (const File& f : files)
    if (f.cases == 0) {
      const std::string warn = cat("WARNING: your kernel ", f.path, " ran in no case: nothing here checked it (its "
                                   "cases were UNSUPPORTED, REJECTED or ERROR, none was drawn, or its backend "
                                   "did not run).");
      std::printf("\n%s\n", warn.c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "%s\n", warn.c_str());
    }
}

KernelDir load_kernel_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(cat("--kernels '", dir, "' is not a directory (it should hold <kernel>.comp / <kernel>.wgsl files)"));
  // The kernels a file may replace: one list when both languages have the same ones.
  auto known = [] {
    auto names = [](const char* ext) {
      std::string s;
      for (const std::string& k : builtin_kernels(ext)) s += cat(s.empty() ? "" : ", ", k);
      return s;
    };
    const std::string comp = names(".comp"), wgsl = names(".wgsl");
    return comp == wgsl ? cat("built-in kernels, each as .comp and .wgsl: ", comp)
                        : cat("Vulkan kernels (.comp): ", comp, "; WebGPU kernels (.wgsl): ", wgsl);
  };
  KernelDir out;
  out.dir = dir;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw UsageError(cat("--kernels '", dir, "' cannot be read: ", ec.message()));
  for (; it != end; it.increment(ec)) {
    const fs::path p = it->path();
    const std::string name = p.filename().string();
    if (name.empty() || name[0] == '.') continue;
    const std::string ext = p.extension().string(), stem = p.stem().string();
    const bool lang = ext == ".comp" || ext == ".wgsl";
    const std::vector<std::string> stems = lang ? builtin_kernels(ext) : std::vector<std::string>{};
    if (!lang || std::find(stems.begin(), stems.end(), stem) == stems.end())
      throw UsageError(cat("--kernels: ", (fs::path(dir) / name).string(), " names no built-in kernel (files are ",
                           "<kernel>.comp for Vulkan, <kernel>.wgsl for WebGPU; ", known(), ")"));
    if (!it->is_regular_file(ec))
      throw UsageError(cat("--kernels: ", (fs::path(dir) / name).string(), " is not a regular file"));
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw UsageError(cat("--kernels: ", (fs::path(dir) / name).string(), " cannot be read"));
    if (text.str().empty()) throw UsageError(cat("--kernels: ", (fs::path(dir) / name).string(), " is empty"));
    out.files.push_back({stem, ext, (fs::path(dir) / name).string(), text.str()});
  }
  if (ec) throw UsageError(cat("--kernels '", dir, "' cannot be read: ", ec.message()));
  if (out.files.empty())
    throw UsageError(cat("--kernels '", dir, "' holds no kernel (<kernel>.comp for Vulkan, <kernel>.wgsl for WebGPU; ",
                         known(), ")"));
  std::sort(out.files.begin(), out.files.end(),
            [](const KernelFile& a, const KernelFile& b) { return a.kernel + a.ext < b.kernel + b.ext; });
  return out;
}

}  // namespace ts
