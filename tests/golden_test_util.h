#pragma once
// What the golden tests share: a scratch directory, the committed set, safetensors bytes
// assembled by hand as another tool (or an attacker) would write them, and the CLI as a user runs it.
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

namespace ts::golden_test {

inline const std::string kCommitted = std::string(TS_SOURCE_DIR) + "/goldens";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "ts-golden-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// An 8-byte little-endian header length, the header, the data area.
inline std::string assemble(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// The touchstone binary's exit status and its stdout+stderr. `timeout` ends a hang as a failure.
inline std::pair<int, std::string> run_cli(const std::string& args) {
  std::string cmd = "timeout 300 " + std::string(TS_BINARY_DIR) + "/touchstone " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = p ? ::pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace ts::golden_test
