#include "properties/gen_common.h"

#include <algorithm>

#include "core/layout.h"

namespace ts::gen {

bool texture_fits(const Shape& s, DType t, const std::string& layout) {
  const Physical p = physical(s, t, layout_from_name(layout));
  if (!is_texture(p.layout)) return true;
  return std::all_of(std::begin(p.extent), std::end(p.extent), [](int64_t e) { return e >= 1 && e <= kMaxTextureExtent; });
}

std::string storage(const OpDef& op, const Fits& fits) {
  std::vector<std::string> tensors = op.inputs;
  for (auto& o : op.outputs)
    if (std::find(tensors.begin(), tensors.end(), o) == tensors.end()) tensors.push_back(o);
  // What each tensor may take here: its declared layouts that fit; a buffer always fits.
  std::map<std::string, std::vector<std::string>> allowed;
  std::vector<std::string> textures;  // every non-buffer layout some tensor may take, in layout_names() order
  for (auto& t : tensors) {
    auto it = op.layouts.find(t);
    const std::vector<std::string> declared = it == op.layouts.end() ? std::vector<std::string>{"buffer"} : it->second;
    for (auto& l : declared)
      if (l == "buffer" || !fits || fits(t, l)) allowed[t].push_back(l);
    if (allowed[t].empty()) allowed[t] = declared;  // nothing fits: the device will say UNSUPPORTED
  }
  for (auto& l : layout_names())
    if (l != "buffer" && std::any_of(tensors.begin(), tensors.end(), [&](auto& t) {
          return std::find(allowed[t].begin(), allowed[t].end(), l) != allowed[t].end();
        }))
      textures.push_back(l);
  if (textures.empty()) return "buffer";

  Storage s;
  // element(), unlike inRange(), does not scale with RapidCheck's size: the sweep's first (small)
  // cases get mixed layouts as often as its last. Both shrink towards the first: all buffers.
  const int mode = *rc::gen::element(0, 1, 2);
  if (mode == 1) s.fallback = *rc::gen::elementOf(textures);
  if (mode == 2) {
    std::vector<std::string> any = {"buffer"};
    any.insert(any.end(), textures.begin(), textures.end());
    s.fallback = *rc::gen::elementOf(any);
  }
  auto takes = [&](const std::string& t, const std::string& l) {
    return std::find(allowed[t].begin(), allowed[t].end(), l) != allowed[t].end();
  };
  if (mode == 2) {  // one to three tensors in a layout other than the default
    const int n = *rc::gen::element(1, 2, 3);
    for (int k = 0; k < n; ++k) {
      const std::string t = *rc::gen::elementOf(tensors);
      std::vector<std::string> other;
      for (auto& l : allowed[t])
        if (l != s.fallback) other.push_back(l);
      if (!other.empty()) s.overrides[t] = *rc::gen::elementOf(other);
    }
  }
  for (auto& t : tensors)  // a tensor that cannot take the default takes one it can
    if (!s.overrides.count(t) && !takes(t, s.fallback)) s.overrides[t] = *rc::gen::elementOf(allowed[t]);
  return s.text();
}

}  // namespace ts::gen
