#pragma once
// Memory layouts in case ids (SPEC "Layouts"): the storage part of an id is a default layout for
// every tensor, optionally followed by per-tensor overrides, e.g.
//   texture3d_c;freqs_cos=buffer;xk_out=texture3d_w
// Parsing is strict: an unknown layout name, a malformed override or a tensor named twice is a
// UsageError. Whether an operator allows a layout for a tensor is checked against its OpDef
// (core/case_rules.h), not here: core knows no operator.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace ts {

// Every layout name SPEC defines, in the order `touchstone list` shows them.
const std::vector<std::string>& layout_names();
bool is_layout(std::string_view name);

struct Storage {
  std::string fallback = "buffer";                // the layout of every tensor not overridden
  std::map<std::string, std::string> overrides;   // tensor name -> layout

  const std::string& of(const std::string& tensor) const;
  static Storage parse(std::string_view text);    // throws UsageError naming the bad part
  // The canonical text: the default, then `;tensor=layout` in name order for each tensor whose
  // layout differs from it (what the generators write; parse reads it back unchanged).
  std::string text() const;
};

// The physical forms (SPEC "Layouts"). Every layout groups a tensor's elements into *texels* of 4
// lanes along its packed dimension; a texel is the unit a kernel stores (an RGBA texel of an image,
// one 32-bit word of a packed int8 buffer, 4 consecutive elements of a plain buffer), so no two
// invocations ever write parts of one. Lanes past the end of the packed dimension are padding: zero.
enum class Layout : uint32_t { buffer = 0, texture3d_w, texture3d_h, texture3d_c, int8_4w, int8_4c1w, int8_4w4c };
Layout layout_from_name(std::string_view name);  // throws UsageError for an unknown name
const char* layout_name(Layout l);
inline bool is_texture(Layout l) { return l >= Layout::texture3d_w && l <= Layout::texture3d_c; }
inline bool is_packed_int8(Layout l) { return l >= Layout::int8_4w; }

// A tensor seen as [N,C,H,W]: missing leading dimensions are 1, dimensions before the last four
// fold into N.
struct Nchw {
  int64_t n = 1, c = 1, h = 1, w = 1;
};
Nchw nchw_of(const Shape& s);

// Where a tensor's elements live in a layout.
struct Physical {
  Layout layout = Layout::buffer;
  Nchw dims;
  int64_t extent[3] = {0, 0, 0};  // textures: image extents (x, y, z) in texels; otherwise {texels, 1, 1}
  int64_t texels = 0;             // extent[0] * extent[1] * extent[2]
  size_t texel_bytes = 0;         // 4 lanes: 4 * element size (textures, buffers), 4 (packed int8)
  size_t bytes = 0;               // texels * texel_bytes, except buffer: the tensor's own bytes
  // Flat logical index of lane `lane` of texel `t`, or -1 for a padding lane.
  int64_t flat(int64_t t, int lane) const;
  // The texel and lane holding flat logical index i.
  void locate(int64_t i, int64_t& t, int& lane) const;
};
// Throws UsageError when `l` cannot hold `dtype` (packed int8 layouts hold int8 only).
Physical physical(const Shape& s, DType dtype, Layout l);

// Logical -> physical bytes (padding lanes zero) and back. unpack counts padding lanes that are not
// zero (the kernel wrote garbage there) in *bad_padding and the first such texel in *first_bad.
std::vector<uint8_t> pack(const Tensor& t, Layout l);
Tensor unpack(const std::vector<uint8_t>& bytes, size_t offset, const Shape& s, DType dtype, Layout l,
              int64_t* bad_padding = nullptr, int64_t* first_bad = nullptr);

}  // namespace ts
