#pragma once
// Deliberately broken kernels for tests: the shipped kernel's own text (as embedded in the binary)
// with one line spliced in next to the line containing `anchor`, so the test exercises exactly the
// real kernel plus one bug, and stays right when the real kernel changes.
#include <stdexcept>
#include <string>

#include "gpu/embedded.h"
#include "gpu/kernel_source.h"

namespace ts::test {

// `src` with `bug` inserted as a line before (or after) the first line containing `anchor`.
inline std::string splice(std::string src, const std::string& anchor, const std::string& bug, bool after,
                          const std::string& what = "kernel") {
  size_t at = src.find(anchor);
  if (at == std::string::npos) throw std::runtime_error(what + " no longer contains '" + anchor + "'");
  size_t line_start = src.rfind('\n', at);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  size_t line_end = src.find('\n', at);
  line_end = line_end == std::string::npos ? src.size() : line_end + 1;
  src.insert(after ? line_end : line_start, bug + "\n");
  return src;
}

// `src` with the first `from` replaced by `to`.
inline std::string replace_once(std::string src, const std::string& from, const std::string& to,
                                const std::string& what = "kernel") {
  const size_t at = src.find(from);
  if (at == std::string::npos) throw std::runtime_error(what + " no longer contains '" + from + "'");
  return src.replace(at, from.size(), to);
}

// Spliced after a GLSL `out_store(t, v);` of a texture3d_w output: the texel is stored again with 7.0
// in its padding lanes, around the accessor (which zeroes them).
inline constexpr const char* kGarbageInPaddingOfOut =
    "  for (uint j = ts_lanes(TS_TEXTURE3D_W, out_dims(), t); j < 4u; ++j) v[j] = 7.0;\n"
    "  imageStore(ts_img_out, ivec3(ts_coord(TS_TEXTURE3D_W, out_dims(), t)), v);";

// The anchor may lie in a file the kernel includes (gpu/kernel_source.h): the bug goes into the
// kernel's resolved text, so it breaks that kernel alone.
inline std::string shipped(const std::string& path) {
  return resolve_includes(embedded(path), path.substr(0, path.rfind('/') + 1), path);
}
inline std::string with_bug(const std::string& path, const std::string& anchor, const std::string& bug, bool after) {
  return splice(shipped(path), anchor, bug, after, path);
}

}  // namespace ts::test
