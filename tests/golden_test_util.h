#pragma once
// What the golden tests share: a scratch directory, the committed set, and safetensors bytes
// assembled by hand as another tool (or an attacker) would write them.
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

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

}  // namespace ts::golden_test
