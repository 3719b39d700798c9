#include "core/layout.h"

#include <algorithm>

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
