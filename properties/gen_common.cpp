#include "properties/gen_common.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

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
  std::vector<std::string> any_layouts = {"buffer"};
  any_layouts.insert(any_layouts.end(), textures.begin(), textures.end());

  Storage s;
  // draw::element, unlike draw::in_range, does not scale with RapidCheck's size: the sweep's first
  // (small) cases get mixed layouts as often as its last. It shrinks towards the first: all buffers.
  // Half of them mixed: a mixed pattern costs no more compiles than a uniform one, and some of its
  // draws end uniform (a texture too large for the case's shape falls back to a buffer).
  const int mode = draw::element<int>(0, 1, 2, 2);
  if (mode == 1) s.fallback = draw::element_of(textures);
  if (mode == 2) {
    // One of kMixedPatterns fixed patterns of this operator, not a fresh combination per case: a
    // backend compiles one program per pattern of storage kinds (which tensors are textures, which
    // buffers; gpu/ACCESSORS.md), so the patterns, not the cases, set what layouts cost a cold
    // sweep. The two patterns flip the same one to three tensors (drawn from a stream keyed by the
    // operator, among those that declare both kinds): to textures from a buffer default, and to
    // buffers from a texture default, so each of them meets the other kind in a program both ways.
    // Within a pattern each case draws every layout of a kind freely (the texture packings, the
    // int8 packings): those are read at run time.
    std::vector<uint64_t> indices(kMixedPatterns);
    std::iota(indices.begin(), indices.end(), 0);
    const uint64_t index = draw::element_of(indices);
    uint64_t r = splitmix64(fnv1a64(op.name));
    auto next = [&](size_t n) { return size_t((r = splitmix64(r)) % n); };
    auto kind_of = [](const std::string& l) { return is_texture(layout_from_name(l)); };
    const bool default_texture = std::any_of(textures.begin(), textures.end(), kind_of) && index == 1;
    std::vector<std::string> pool;  // tensors with layouts of both kinds
    for (auto& t : tensors)
      if (std::any_of(declared[t].begin(), declared[t].end(), kind_of) && !std::all_of(declared[t].begin(), declared[t].end(), kind_of))
        pool.push_back(t);
    if (pool.empty()) pool = tensors;
    std::set<std::string> flipped;
    for (size_t k = 0, n = 1 + next(std::clamp<size_t>(pool.size() - 1, 1, 3)); k < n; ++k) flipped.insert(pool[next(pool.size())]);
    // A layout of kind `texture` for tensor t, or of any kind where it declares none of that one.
    auto draw = [&](const std::string& t, bool texture) {
      std::vector<std::string> of_kind;
      for (auto& l : declared[t])
        if (kind_of(l) == texture) of_kind.push_back(l);
      return draw::element_of(of_kind.empty() ? declared[t] : of_kind);
    };
    std::vector<std::string> defaults;
    for (auto& l : any_layouts)
      if (kind_of(l) == default_texture) defaults.push_back(l);
    s.fallback = draw::element_of(defaults);
    for (auto& t : tensors) {
      const bool texture = flipped.count(t) ? !default_texture : default_texture;
      // Tensors of the default's kind mostly keep the default layout, sometimes another of its kind.
      if (!flipped.count(t) && draw::element<int>(0, 1, 2) != 2) continue;
      if (std::string l = draw(t, texture); l != s.fallback) s.overrides[t] = l;
    }
    // Mixed means mixed: where every draw landed on the default, a flipped tensor takes another layout.
    if (s.overrides.empty())
      for (auto& t : flipped) {
        std::vector<std::string> other;
        for (auto& l : declared[t])
          if (l != s.fallback) other.push_back(l);
        if (other.empty()) continue;
        s.overrides[t] = draw::element_of(other);
        break;
      }
  }
  // A tensor that cannot take its layout here (not declared, or a texture too large for this
  // case's shape) takes the first declared layout of the same kind that it can (another texture
  // packing: the pattern of kinds, and so the program, stays one the sweep compiles anyway), else
  // the first declared layout that it can: a buffer for every operator so far.
  for (auto& t : tensors) {
    auto ok = [&](const std::string& l) {
      return std::find(declared[t].begin(), declared[t].end(), l) != declared[t].end() &&
             (l == "buffer" || !fits || fits(t, l));
    };
    const std::string want = s.of(t);
    if (ok(want)) continue;
    const bool texture = is_texture(layout_from_name(want));
    auto same = std::find_if(declared[t].begin(), declared[t].end(),
                             [&](const std::string& l) { return ok(l) && is_texture(layout_from_name(l)) == texture; });
    auto first = same != declared[t].end() ? same : std::find_if(declared[t].begin(), declared[t].end(), ok);
    s.overrides[t] = first != declared[t].end() ? *first : declared[t].front();
  }
  return s.text();
}

namespace {
thread_local std::string last_rule;
}  // namespace

void break_rule(const OpDef& op, const std::vector<Breaker>& ways) {
  for (const Breaker& w : ways)
    if (std::none_of(op.rules.begin(), op.rules.end(), [&](const Rule& r) { return r.id == w.rule; }))
      throw std::logic_error(cat(op.name, "'s generator breaks rule '", w.rule, "', which ", op.name, " does not declare"));
  if (ways.empty()) throw std::logic_error(cat(op.name, "'s generator names no rule to break"));
  draw::choose(std::vector<uint64_t>(ways.size(), 1), [&](size_t i) {
    last_rule = ways[i].rule;
    ways[i].apply();
  });
}

const std::string& last_broken_rule() { return last_rule; }

}  // namespace ts::gen
