#include "gpu/webgpu/locate.h"

#include <unistd.h>

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

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

bool has_webgpu(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "node_modules" / "webgpu" / "package.json", ec);
}

}  // namespace

std::string find_node(const std::string& requested, std::string* why_not) {
  std::string want = !requested.empty() ? requested : !env("TOUCHSTONE_NODE").empty() ? env("TOUCHSTONE_NODE") : "node";
  if (want.find('/') != std::string::npos) {
    if (executable(want)) return fs::absolute(want).string();
    *why_not = cat("webgpu: node '", want, "' is not an executable file");
    return "";
  }
  const std::string path = env("PATH");
  size_t at = 0;
  while (at <= path.size()) {
    size_t colon = path.find(':', at);
    std::string dir = path.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    at = colon == std::string::npos ? path.size() + 1 : colon + 1;
    fs::path p = fs::path(dir.empty() ? "." : dir) / want;
    if (executable(p)) return fs::absolute(p).string();
  }
  *why_not = cat("webgpu: '", want, "' not found on PATH: install Node.js (ci/setup.sh) or set TOUCHSTONE_NODE");
  return "";
}

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

std::string find_layer_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = exe.parent_path();
  return fs::is_regular_file(dir / "ts_roll_loops_layer.json", ec) ? dir.string() : "";
}

}  // namespace ts::webgpu
