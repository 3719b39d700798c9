#include "gpu/webgpu/locate.h"


#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/contract.h"

#ifndef TS_WEBGPU_DIR
#define TS_WEBGPU_DIR ""
#endif

namespace ts::webgpu {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool has_webgpu(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "node_modules" / "webgpu" / "package.json", ec);
}

}  // namespace

std::string find_modules_dir(const std::string& requested, std::string* why_not) {
  std::vector<fs::path> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    if (!env("TOUCHSTONE_WEBGPU_DIR").empty()) candidates.push_back(env("TOUCHSTONE_WEBGPU_DIR"));
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      candidates.push_back(exe.parent_path() / ".." / "gpu" / "webgpu");
      candidates.push_back(exe.parent_path() / "gpu" / "webgpu");
    }
    if (*TS_WEBGPU_DIR) candidates.push_back(TS_WEBGPU_DIR);
  }
  std::string searched;
  for (const fs::path& c : candidates) {
    if (has_webgpu(c)) return fs::weakly_canonical(c).string();
    searched += cat(searched.empty() ? "" : ", ", c.lexically_normal().string());
  }
  *why_not = cat("webgpu: npm package 'webgpu' not found in ", searched, ": run ci/setup.sh");
  return "";
}

}  // namespace ts::webgpu
