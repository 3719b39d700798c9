#pragma once
// Kernel sources compiled into the binary (cmake/embed.cmake), keyed by path from the repo root,
// e.g. "gpu/vulkan/shaders/KERNEL.comp".
#include <map>
#include <string>
#include <string_view>

namespace ts {
const std::map<std::string, std::string_view>& embedded_files();
// The file's text; throws std::runtime_error naming the path if it is not embedded.
std::string_view embedded(const std::string& path);
}  // namespace ts
