#include "goldens/regen.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/registry.h"
#include "core/runner.h"
#include "goldens/files.h"
#include "goldens/manifest.h"
#include "goldens/sha256.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// The float dtypes every operator of the first set defines; valid goldens per operator and dtype.
constexpr DType kDtypes[] = {DType::f32, DType::f16, DType::bf16};
constexpr size_t kValidPerDtype = 3;

// Listed before any is removed: removing entries while iterating a directory is unspecified.
std::vector<fs::path> files_of(const std::string& dir) {
  std::vector<fs::path> v;
  for (auto& e : fs::directory_iterator(dir)) v.push_back(e.path());
  return v;
}

size_t case_bytes(const Expected& e) {
  size_t n = 0;
  for (auto& [_, t] : e.problem.inputs) n += t.nbytes();
  for (auto& [_, t] : e.outputs) n += t.nbytes();
  return n;
}

Golden golden_from_expected(const Expected& e) {
  Golden g;
  g.op = e.c.op;
  g.dtype = e.c.dtype;
  g.params = e.problem.params;
  g.reject = e.violation.has_value();
  g.source = kReferenceSource;
  g.case_id = e.c.id();
  g.seed = e.c.seed;
  g.inputs = e.problem.inputs;
  if (!g.reject) {
    g.expected = e.outputs;
    g.tolerance = e.tol;
  }
  return g;
}

// Case variables describe well-formed ranks only, so a rule such as input_rank is broken by no
// case id. Such a golden is derived from a valid case by reshaping one input (same bytes, another
// rank) until validate names the rule; it has no `case`, and `derived_from` says how it was made.
std::optional<Golden> derived_reject(const OpDef& op, const Expected& base, const std::string& rule) {
  for (auto& [name, t] : base.problem.inputs) {
    std::vector<Shape> shapes;
    if (t.shape.size() >= 2) {
      Shape merged(t.shape.begin() + 1, t.shape.end());
      merged[0] *= t.shape[0];
      shapes.push_back(merged);
    }
    Shape lifted = t.shape;
    lifted.insert(lifted.begin(), 1);
    shapes.push_back(lifted);
    for (const Shape& s : shapes) {
      Problem p = base.problem;
      p.inputs[name].shape = s;
      auto v = op.validate(p);
      if (!v || v->rule != rule) continue;
      Golden g = golden_from_expected(base);
      g.reject = true;
      g.case_id.reset();
      g.expected.clear();
      g.tolerance.reset();
      g.inputs = std::move(p.inputs);
      g.extra["derived_from"] = cat(base.c.id(), " with ", name, " reshaped from ", shape_str(t.shape), " to ", shape_str(s));
      return g;
    }
  }
  return std::nullopt;
}

}  // namespace

Golden golden_from_case(const Case& c) {
  Expected e = prepare(c);
  if (!e.error.empty()) throw UsageError(cat("case ", c.id(), ": ", e.error));
  return golden_from_expected(e);
}

std::vector<std::pair<std::string, Golden>> golden_set() {
  std::vector<std::pair<std::string, Golden>> set;
  for (const OpDef* op : all_ops())
    for (DType t : kDtypes) {
      if (std::find(op->dtypes.begin(), op->dtypes.end(), t) == op->dtypes.end()) continue;
      std::vector<Expected> valid, invalid;
      for (const Case& c : op->edge_cases(t)) {
        Expected e = prepare(c);
        if (!e.error.empty()) throw std::runtime_error(cat("edge case ", c.id(), ": ", e.error));
        (e.violation ? invalid : valid).push_back(std::move(e));
      }
      if (valid.empty()) throw std::runtime_error(cat(op->name, " has no valid edge case for ", dtype_name(t)));
      // The smallest cases keep the committed set small; edge cases are ordered by intent, so ties keep it.
      auto smaller = [](const Expected& a, const Expected& b) { return case_bytes(a) < case_bytes(b); };
      std::stable_sort(valid.begin(), valid.end(), smaller);
      std::stable_sort(invalid.begin(), invalid.end(), smaller);
      const std::string prefix = cat(op->name, "-", dtype_name(t));
      for (size_t i = 0; i < valid.size() && i < kValidPerDtype; ++i)
        set.emplace_back(cat(prefix, "-pass-", i + 1, ".safetensors"), golden_from_expected(valid[i]));
      for (const Rule& rule : op->rules) {
        auto it = std::find_if(invalid.begin(), invalid.end(), [&](auto& e) { return e.violation->rule == rule.id; });
        std::optional<Golden> g = it != invalid.end() ? golden_from_expected(*it) : derived_reject(*op, valid[0], rule.id);
        if (!g)
          throw std::runtime_error(cat("no edge case of ", op->name, " (", dtype_name(t), ") breaks rule ", rule.id,
                                       "; add an invalid edge case for it"));
        set.emplace_back(cat(prefix, "-reject-", rule.id, ".safetensors"), std::move(*g));
      }
    }
  std::sort(set.begin(), set.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return set;
}

RegenSummary regenerate(const std::string& dir) {
  std::vector<std::pair<std::string, Golden>> set = golden_set();
  Manifest m;
  m.sources = reference_sources();
  if (m.sources.empty()) throw std::runtime_error("this binary embeds no reference sources to hash (see CMakeLists.txt)");
  fs::create_directories(dir);
  for (const fs::path& p : files_of(dir))
    if (is_temp_name(p.filename().string())) fs::remove(p);

  RegenSummary sum;
  std::vector<std::pair<std::string, std::string>> staged;  // temporary file, final path
  auto stage = [&](const std::string& path, const std::string& bytes) {
    std::string old;
    try {
      old = read_file(path);
    } catch (const std::runtime_error&) {
    }
    if (old != bytes) staged.emplace_back(write_temp_beside(path, bytes), path);
  };
  try {
    for (auto& [name, g] : set) {
      std::string bytes = serialize_golden(g);
      m.files[name] = sha256_hex(bytes);
      sum.bytes += bytes.size();
      stage((fs::path(dir) / name).string(), bytes);
    }
    sum.changed = staged.size();
    stage((fs::path(dir) / kManifestName).string(), serialize_manifest(m));
  } catch (...) {
    for (auto& [temp, _] : staged) fs::remove(temp);
    throw;
  }
  for (auto& [temp, path] : staged) commit_temp(temp, path);
  for (const fs::path& p : files_of(dir))
    if (p.extension() == ".safetensors" && !m.files.count(p.filename().string())) {
      fs::remove(p);
      ++sum.removed;
    }
  sum.files = set.size();
  return sum;
}

}  // namespace ts
