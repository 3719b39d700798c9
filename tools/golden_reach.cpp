#include "tools/golden_reach.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/runner.h"
#include "gpu/plans/coverage.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {

// What the drawn valid cases of one operator's default sweeps (every dtype) hold.
struct Reach {
  std::map<std::string, std::pair<int64_t, int64_t>> ints;  // integer variable (list: each element) -> [min, max]
  std::map<std::string, std::set<std::string>> words;       // word variable -> values
  std::set<std::string> classes;
};

bool integer(const std::string& v) {
  return !v.empty() && std::all_of(v.begin() + (v[0] == '-'), v.end(), [](char ch) { return (ch >= '0' && ch <= '9') || ch == ':'; });
}

std::vector<int64_t> numbers(const Case& c, const std::string& name, const std::string& v) {
  return v.find(':') == std::string::npos ? std::vector<int64_t>{c.get(name)} : c.list(name);
}

// Shape classes of a valid case, without storage, dtype and the fold (a seed's choice, not a shape).
std::vector<std::string> shape_classes(const Case& c) {
  Expected e;
  e.c = c;
  e.op = find_op(c.op);
  e.problem = e.op->make(c);
  e.violation = e.op->validate(e.problem);
  std::vector<std::string> out;
  if (e.violation) return out;
  for (auto& cls : case_classes(e, /*of_plans=*/false))
    if (!is_storage_class(cls) && cls.rfind("dtype ", 0) != 0 && cls.rfind("folded grid", 0) != 0) out.push_back(cls);
  return out;
}

const Reach& reach_of(const OpDef& op) {
  static std::map<std::string, Reach> cache;
  auto it = cache.find(op.name);
  if (it != cache.end()) return it->second;
  Reach r;
  auto widen = [&r](const std::string& name, int64_t x) {
    auto [at, fresh] = r.ints.emplace(name, std::make_pair(x, x));
    if (!fresh) at->second = {std::min(at->second.first, x), std::max(at->second.second, x)};
  };
  for (DType t : op.dtypes) {
    const Sweep sweep(op, t, kDefaultCases, 1);
    const std::string large = op.large_case().id();
    for (int64_t k = sweep.edges(); k < sweep.size(); ++k) {
      const Case c = sweep.at(k);
      if (c.id() == large) continue;
      if (op.validate(op.make(c))) continue;
      for (auto& [name, v] : c.vars) {
        if (!integer(v)) {
          r.words[name].insert(v);
          continue;
        }
        for (int64_t x : numbers(c, name, v)) widen(name, x);
      }
      // A variable the id leaves out takes its default: the value a golden may spell out.
      for (const Var& v : op.vars)
        if (v.kind == Var::Kind::integer && !c.has(v.name) && integer(v.dflt)) widen(v.name, std::stoll(v.dflt));
      for (auto& cls : shape_classes(c)) r.classes.insert(cls);
    }
  }
  return cache.emplace(op.name, std::move(r)).first->second;
}

}  // namespace

std::vector<std::string> beyond_generators(const std::vector<Case>& goldens) {
  std::vector<std::string> out;
  for (const Case& c : goldens) {
    const OpDef* op = find_op(c.op);
    if (!op || op->validate(op->make(c))) continue;
    const Reach& r = reach_of(*op);
    std::string what;
    auto add = [&](const std::string& s) { what += (what.empty() ? "" : "; ") + s; };
    for (auto& [name, v] : c.vars) {
      if (!integer(v)) {
        auto w = r.words.find(name);
        if (w == r.words.end() || !w->second.count(v)) add(cat(name, "=", v, " never drawn"));
        continue;
      }
      auto range = r.ints.find(name);
      if (range == r.ints.end()) {
        add(cat(name, " never drawn"));
        continue;
      }
      for (int64_t x : numbers(c, name, v))
        if (x < range->second.first || x > range->second.second) {
          add(cat(name, "=", v, " outside the drawn ", range->second.first, "..", range->second.second));
          break;
        }
    }
    for (auto& cls : shape_classes(c))
      if (!r.classes.count(cls)) add(cat("class '", cls, "' never drawn"));
    if (!what.empty()) out.push_back(cat(c.id(), ": ", what));
  }
  return out;
}

}  // namespace ts
