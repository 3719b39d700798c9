#include "gpu/embedded.h"

#include <stdexcept>

namespace ts {
std::string_view embedded(const std::string& path) {
  auto& files = embedded_files();
  auto it = files.find(path);
  if (it == files.end()) throw std::runtime_error("kernel source not embedded in this binary: " + path);
  return it->second;
}
}  // namespace ts
