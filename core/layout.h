#pragma once
// Memory layouts in case ids (SPEC "Layouts"): the storage part of an id is a default layout for
// every tensor, optionally followed by per-tensor overrides, e.g.
//   texture3d_c;freqs_cos=buffer;xk_out=texture3d_w
// Parsing is strict: an unknown layout name, a malformed override or a tensor named twice is a
// UsageError. Whether an operator allows a layout for a tensor is checked against its OpDef
// (core/case_rules.h), not here: core knows no operator.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// Every layout name SPEC defines, in the order `touchstone list` shows them.
const std::vector<std::string>& layout_names();
bool is_layout(std::string_view name);

struct Storage {
  std::string fallback = "buffer";                // the layout of every tensor not overridden
  std::map<std::string, std::string> overrides;   // tensor name -> layout

  const std::string& of(const std::string& tensor) const;
  static Storage parse(std::string_view text);    // throws UsageError naming the bad part
};

}  // namespace ts
