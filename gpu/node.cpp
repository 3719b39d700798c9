#include "gpu/node.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/contract.h"
#include "gpu/embedded.h"

namespace ts {

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

}  // namespace

std::string find_node(const std::string& requested, std::string* why_not) {
  std::string want = !requested.empty() ? requested : !env("TOUCHSTONE_NODE").empty() ? env("TOUCHSTONE_NODE") : "node";
  if (want.find('/') != std::string::npos) {
    if (executable(want)) return fs::absolute(want).string();
    *why_not = cat("node '", want, "' is not an executable file");
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
  *why_not = cat("'", want, "' not found on PATH: install Node.js (ci/setup.sh) or set TOUCHSTONE_NODE");
  return "";
}

std::vector<std::string> node_worker_argv(const std::string& node, const std::string& worker,
                                          const std::vector<std::string>& args) {
  std::vector<std::string> argv = {node, "--input-type=module", "-e",
                                   cat(embedded("gpu/worker_frames.mjs"), "\n", embedded(worker)), "--"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace ts
