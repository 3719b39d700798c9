#include "properties/gen_common.h"

#include <algorithm>
#include <numeric>

#include "core/layout.h"
#include "core/rng.h"

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
  std::map<std::string, std::vector<std::string>> declared;
  std::vector<std::string> textures;  // every non-buffer layout some tensor declares, in layout_names() order
  for (auto& t : tensors) {
    auto it = op.layouts.find(t);
    declared[t] = it == op.layouts.end() ? std::vector<std::string>{"buffer"} : it->second;
  }
  for (auto& l : layout_names())
    if (l != "buffer" && std::any_of(tensors.begin(), tensors.end(), [&](auto& t) {
          return std::find(declared[t].begin(), declared[t].end(), l) != declared[t].end();
        }))
      textures.push_back(l);
  if (textures.empty()) return "buffer";

  Storage s;
  // element(), unlike inRange(), does not scale with RapidCheck's size: the sweep's first (small)
  // cases get mixed layouts as often as its last. Both shrink towards the first: all buffers.
  const int mode = *rc::gen::element(0, 1, 2);
  if (mode == 1) s.fallback = *rc::gen::elementOf(textures);
  if (mode == 2) {
    // One of kMixedStorages fixed mixed storages of this operator, not a fresh combination per case:
    // a backend builds one program per combination of its tensors' layouts (gpu/ACCESSORS.md), so
    // the number of combinations, not the cases, sets what layouts cost a sweep. Each is a default
    // (buffer or a texture) and one to three tensors in another declared layout, drawn from a
    // stream keyed by the operator and the index.
    std::vector<uint64_t> indices(kMixedStorages);
    std::iota(indices.begin(), indices.end(), 0);
    const uint64_t index = *rc::gen::elementOf(indices);
    uint64_t r = splitmix64(fnv1a64(op.name) ^ (index + 1));
    auto next = [&](size_t n) { return size_t((r = splitmix64(r)) % n); };
    std::vector<std::string> any = {"buffer"};
    any.insert(any.end(), textures.begin(), textures.end());
    s.fallback = any[next(any.size())];
    for (size_t k = 0, n = 1 + next(3); k < n; ++k) {
      const std::string& t = tensors[next(tensors.size())];
      std::vector<std::string> other;
      for (auto& l : declared[t])
        if (l != s.fallback) other.push_back(l);
      if (!other.empty()) s.overrides[t] = other[next(other.size())];
    }
  }
  // A tensor that cannot take its layout here (not declared, or a texture too large for this
  // case's shape) takes the first declared layout that it can: a buffer for every operator so far.
  for (auto& t : tensors) {
    auto ok = [&](const std::string& l) {
      return std::find(declared[t].begin(), declared[t].end(), l) != declared[t].end() &&
             (l == "buffer" || !fits || fits(t, l));
    };
    if (ok(s.of(t))) continue;
    auto first = std::find_if(declared[t].begin(), declared[t].end(), ok);
    s.overrides[t] = first != declared[t].end() ? *first : declared[t].front();
  }
  return s.text();
}

}  // namespace ts::gen
