#pragma once
// GLSL compute shaders to SPIR-V with glslang, at run time.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts::vk {

// One piece of a shader's text; compiler messages name the piece and a line within it.
struct SourcePart {
  std::string name;
  std::string_view text;
};

// SPIR-V 1.5 for Vulkan 1.2, debug names kept (reflection binds by name). Throws
// std::runtime_error naming the kernel, with glslang's log, if the source does not compile.
std::vector<uint32_t> compile_compute(const std::vector<SourcePart>& parts, const std::string& kernel);

}  // namespace ts::vk
