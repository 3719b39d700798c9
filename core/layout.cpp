#include "core/layout.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/case.h"
#include "core/contract.h"

namespace ts {

const std::vector<std::string>& layout_names() {
  static const std::vector<std::string> names = {"buffer",  "texture3d_w", "texture3d_h", "texture3d_c",
                                                 "int8_4w", "int8_4c1w",   "int8_4w4c"};
  return names;
}

bool is_layout(std::string_view name) {
  const auto& n = layout_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

const std::string& Storage::of(const std::string& tensor) const {
  auto it = overrides.find(tensor);
  return it == overrides.end() ? fallback : it->second;
}

std::string Storage::text() const {
  std::string t = fallback;
  for (auto& [tensor, layout] : overrides)  // a std::map: name order
    if (layout != fallback) t += ";" + tensor + "=" + layout;
  return t;
}

Storage Storage::parse(std::string_view text) {
  auto known = [&](std::string_view name) {
    if (!is_layout(name)) {
      std::string all;
      for (auto& n : layout_names()) all += (all.empty() ? "" : ", ") + n;
      throw UsageError(cat("storage '", text, "': unknown layout '", name, "' (layouts: ", all, ")"));
    }
  };
  Storage s;
  size_t start = 0;
  bool first = true;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ';') continue;
    std::string_view item = text.substr(start, i - start);
    start = i + 1;
    if (first) {
      known(item);
      s.fallback = std::string(item);
      first = false;
      continue;
    }
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw UsageError(cat("storage '", text, "': override '", item, "' must be <tensor>=<layout>"));
    std::string tensor(item.substr(0, eq));
    known(item.substr(eq + 1));
    if (!s.overrides.emplace(tensor, std::string(item.substr(eq + 1))).second)
      throw UsageError(cat("storage '", text, "': tensor '", tensor, "' is given a layout twice"));
  }
  return s;
}

}  // namespace ts

namespace ts {

namespace {
int64_t ceil4(int64_t x) { return (x + 3) / 4; }
}  // namespace

Layout layout_from_name(std::string_view name) {
  const auto& n = layout_names();
  auto it = std::find(n.begin(), n.end(), name);
  if (it == n.end()) throw UsageError(cat("unknown layout '", name, "'"));
  return Layout(it - n.begin());
}

const char* layout_name(Layout l) { return layout_names().at(size_t(l)).c_str(); }

Nchw nchw_of(const Shape& s) {
  Nchw d;
  const size_t r = s.size();
  if (r >= 1) d.w = s[r - 1];
  if (r >= 2) d.h = s[r - 2];
  if (r >= 3) d.c = s[r - 3];
  if (r >= 4) d.n = numel(Shape(s.begin(), s.end() - 3));
  return d;
}

Physical physical(const Shape& s, DType dtype, Layout l) {
  if (is_packed_int8(l) && dtype != DType::i8)
    throw UsageError(cat("layout ", layout_name(l), " holds int8 only, not ", dtype_name(dtype)));
  Physical p;
  p.layout = l;
  p.dims = nchw_of(s);
  const Nchw& d = p.dims;
  const size_t es = dtype_size(dtype);
  auto set = [&](int64_t x, int64_t y, int64_t z) {
    p.extent[0] = x, p.extent[1] = y, p.extent[2] = z;
    p.texels = numel({x, y, z});
  };
  switch (l) {
    case Layout::buffer: set(ceil4(numel(s)), 1, 1); break;
    case Layout::texture3d_w: set(ceil4(d.w), d.h, numel({d.n, d.c})); break;
    case Layout::texture3d_h: set(d.w, ceil4(d.h), numel({d.n, d.c})); break;
    case Layout::texture3d_c: set(d.w, d.h, numel({d.n, ceil4(d.c)})); break;
    case Layout::int8_4w: set(numel({d.n, d.c, d.h, ceil4(d.w)}), 1, 1); break;
    case Layout::int8_4c1w: set(numel({d.n, ceil4(d.c), d.h, d.w}), 1, 1); break;
    case Layout::int8_4w4c: set(numel({d.n, ceil4(d.c), d.h, ceil4(d.w), 4}), 1, 1); break;
  }
  p.texel_bytes = 4 * es;
  p.bytes = l == Layout::buffer ? size_t(checked_bytes(s, es)) : size_t(checked_bytes({p.texels}, p.texel_bytes));
  return p;
}

// Texel numbering, x fastest: textures (z*Y + y)*X + x with z = n*C + c (w, h packed) or
// n*ceil(C/4) + c/4 (c packed). int8_4w numbers its words as texture3d_w does its texels and int8_4c1w
// as texture3d_c; int8_4w4c's 16-byte block (n, c/4, h, w/4) holds 4 words, word j at w = 4*(w/4) + j.
int64_t Physical::flat(int64_t t, int lane) const {
  const Nchw& d = dims;
  const int64_t W4 = ceil4(d.w), C4 = ceil4(d.c);
  int64_t n, c, h, w;
  switch (layout) {
    case Layout::buffer: {
      int64_t i = 4 * t + lane;
      return i < d.n * d.c * d.h * d.w ? i : -1;
    }
    case Layout::texture3d_w:
    case Layout::int8_4w:
      w = 4 * (t % W4) + lane, h = (t / W4) % d.h, c = (t / W4 / d.h) % d.c, n = t / W4 / d.h / d.c;
      if (w >= d.w) return -1;
      break;
    case Layout::texture3d_h:
      w = t % d.w, h = 4 * ((t / d.w) % ceil4(d.h)) + lane;
      c = (t / d.w / ceil4(d.h)) % d.c, n = t / d.w / ceil4(d.h) / d.c;
      if (h >= d.h) return -1;
      break;
    case Layout::texture3d_c:
    case Layout::int8_4c1w:
      w = t % d.w, h = (t / d.w) % d.h, c = 4 * ((t / d.w / d.h) % C4) + lane, n = t / d.w / d.h / C4;
      if (c >= d.c) return -1;
      break;
    case Layout::int8_4w4c: {
      const int64_t block = t / 4;
      w = 4 * (block % W4) + t % 4, h = (block / W4) % d.h, c = 4 * ((block / W4 / d.h) % C4) + lane;
      n = block / W4 / d.h / C4;
      if (w >= d.w || c >= d.c) return -1;
      break;
    }
    default: return -1;
  }
  return ((n * d.c + c) * d.h + h) * d.w + w;
}

void Physical::locate(int64_t i, int64_t& t, int& lane) const {
  const Nchw& d = dims;
  const int64_t W4 = ceil4(d.w), C4 = ceil4(d.c), H4 = ceil4(d.h);
  const int64_t w = i % d.w, h = (i / d.w) % d.h, c = (i / d.w / d.h) % d.c, n = i / d.w / d.h / d.c;
  switch (layout) {
    case Layout::buffer: t = i / 4, lane = int(i % 4); return;
    case Layout::texture3d_w:
    case Layout::int8_4w: t = ((n * d.c + c) * d.h + h) * W4 + w / 4, lane = int(w % 4); return;
    case Layout::texture3d_h: t = ((n * d.c + c) * H4 + h / 4) * d.w + w, lane = int(h % 4); return;
    case Layout::texture3d_c:
    case Layout::int8_4c1w: t = ((n * C4 + c / 4) * d.h + h) * d.w + w, lane = int(c % 4); return;
    case Layout::int8_4w4c: t = (((n * C4 + c / 4) * d.h + h) * W4 + w / 4) * 4 + w % 4, lane = int(c % 4); return;
  }
}

std::vector<uint8_t> pack(const Tensor& t, Layout l) {
  if (l == Layout::buffer) return t.bytes;
  const Physical p = physical(t.shape, t.dtype, l);
  const size_t es = dtype_size(t.dtype);
  std::vector<uint8_t> out(p.bytes, 0);
  for (int64_t x = 0; x < p.texels; ++x)
    for (int lane = 0; lane < 4; ++lane)
      if (int64_t i = p.flat(x, lane); i >= 0)
        std::memcpy(out.data() + size_t(x) * p.texel_bytes + size_t(lane) * es, t.bytes.data() + size_t(i) * es, es);
  return out;
}

Tensor unpack(const std::vector<uint8_t>& bytes, size_t offset, const Shape& s, DType dtype, Layout l,
              int64_t* bad_padding, int64_t* first_bad) {
  Tensor t(dtype, s);
  const Physical p = physical(s, dtype, l);
  if (bytes.size() < offset + p.bytes)
    throw std::runtime_error(cat("unpack: ", bytes.size() - offset, " bytes for a ", layout_name(l), " tensor of ",
                                 p.bytes, " bytes"));
  int64_t bad = 0, first = -1;
  if (l == Layout::buffer) {
    if (p.bytes) std::memcpy(t.bytes.data(), bytes.data() + offset, p.bytes);
  } else {
    const size_t es = dtype_size(dtype);
    static const uint8_t zero[8] = {};
    for (int64_t x = 0; x < p.texels; ++x)
      for (int lane = 0; lane < 4; ++lane) {
        const uint8_t* src = bytes.data() + offset + size_t(x) * p.texel_bytes + size_t(lane) * es;
        if (int64_t i = p.flat(x, lane); i >= 0) {
          std::memcpy(t.bytes.data() + size_t(i) * es, src, es);
        } else if (std::memcmp(src, zero, es) != 0) {
          if (!bad) first = x;
          ++bad;
        }
      }
  }
  if (bad_padding) *bad_padding = bad;
  if (first_bad) *first_bad = first;
  return t;
}

}  // namespace ts
