#pragma once
// Kernel sources as the backends compile them. GLSL as glslang takes it and WGSL have no include
// mechanism; kernels that share code (the q8ta requantization, q8ta_linear's tile code that
// q8ta_conv2d's im2col GEMM reuses) name it with a line `#include "file"`, resolved here, textually,
// before the backend parses accessors or compiles, for built-in and overridden sources alike
// (GpuBackend::set_kernel_source).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ts {

// The text of include `name`, or nullopt when there is none.
using IncludeReader = std::function<std::optional<std::string>(const std::string& name)>;

// `source` with every line `#include "name"` (blanks allowed around it) replaced by the text of
// `dir` + name: as `read` returns it when given, else as embedded in the binary (core/embedded.h),
// with its own includes resolved the same way. A file included once is not included again (its
// later #include lines become empty), so two includes may both need a third. Every other line is
// kept as it is, so a source without includes comes back unchanged. Throws std::runtime_error naming
// `what` (the kernel) and the missing file.
std::string resolve_includes(std::string_view source, const std::string& dir, const std::string& what,
                             const IncludeReader& read = {});

}  // namespace ts
