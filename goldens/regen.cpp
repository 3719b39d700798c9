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

constexpr size_t kValidPerDtype = 3;

// Listed before any is removed: removing entries while iterating a directory is unspecified.
std::vector<fs::path> files_of(const std::string& dir) {
  std::vector<fs::path> v;
  for (auto& e : fs::directory_iterator(dir)) v.push_back(e.path());
  return v;
}

// An edge case with its inputs and verdict; the reference runs only for the cases picked.
struct Candidate {
  Case c;
  Problem problem;
  std::optional<Violation> violation;
  size_t bytes = 0;  // of the inputs
};

Candidate candidate(const Case& c, const OpDef& op) {
  Candidate k{c, {}, {}, 0};
  try {
    k.problem = op.make(c);
    k.violation = op.validate(k.problem);
  } catch (const std::exception& e) {
    throw std::runtime_error(cat("edge case ", c.id(), " cannot be built: ", e.what()));
  }
  for (auto& [_, t] : k.problem.inputs) k.bytes += t.nbytes();
  return k;
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
    // Per-element bounds have no {"atol","rtol"} form: without one, verify derives them again.
    if (e.tol.elem.empty()) g.tolerance = e.tol;
  }
  return g;
}

// Case variables describe well-formed ranks only, so a rule such as input_rank is broken by no
// case id. Such a golden is derived from a valid case by reshaping one input (same bytes, another
// rank) until validate names the rule; it has no `case`, and `derived_from` says how it was made.
std::optional<Golden> derived_reject(const OpDef& op, const Candidate& base, const std::string& rule) {
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
      Golden g;
      g.op = op.name;
      g.dtype = base.c.dtype;
      g.params = p.params;
      g.reject = true;
      g.source = kReferenceSource;
      g.seed = base.c.seed;
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

GoldenSet golden_set() {
  GoldenSet set;
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      std::vector<Candidate> valid, invalid;
      for (const Case& c : op->edge_cases(t)) {
        Candidate k = candidate(c, *op);
        (k.violation ? invalid : valid).push_back(std::move(k));
      }
      if (valid.empty()) throw std::runtime_error(cat(op->name, " has no valid edge case for ", dtype_name(t)));
      // The smallest cases keep the committed set small; edge cases are ordered by intent, so ties keep it.
      auto smaller = [](const Candidate& a, const Candidate& b) { return a.bytes < b.bytes; };
      std::stable_sort(valid.begin(), valid.end(), smaller);
      std::stable_sort(invalid.begin(), invalid.end(), smaller);
      const std::string prefix = cat(op->name, "-", dtype_name(t));
      for (size_t i = 0; i < valid.size() && i < kValidPerDtype && valid[i].bytes <= kMaxInputBytes; ++i)
        set.files.emplace_back(cat(prefix, "-pass-", i + 1, ".safetensors"), golden_from_case(valid[i].c));
      for (const Rule& rule : op->rules) {
        auto it = std::find_if(invalid.begin(), invalid.end(), [&](auto& k) { return k.violation->rule == rule.id; });
        if (it != invalid.end() && it->bytes > kMaxInputBytes) {
          set.uncovered[cat(op->name, "/", dtype_name(t), "/", rule.id)] =
              cat("the smallest case breaking it, ", it->c.id(), ", has ", it->bytes, " bytes of inputs (cap ",
                  kMaxInputBytes, ")");
          continue;
        }
        std::optional<Golden> g = it != invalid.end() ? golden_from_case(it->c) : derived_reject(*op, valid[0], rule.id);
        if (!g)
          throw std::runtime_error(cat("no edge case of ", op->name, " (", dtype_name(t), ") breaks rule ", rule.id,
                                       "; add an invalid edge case for it"));
        set.files.emplace_back(cat(prefix, "-reject-", rule.id, ".safetensors"), std::move(*g));
      }
    }
  std::sort(set.files.begin(), set.files.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return set;
}

RegenSummary regenerate(const std::string& dir) {
  GoldenSet set = golden_set();
  Manifest m;
  m.uncovered = set.uncovered;
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
    for (auto& [name, g] : set.files) {
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
  sync_dir(dir);
  for (const fs::path& p : files_of(dir))
    if (p.extension() == ".safetensors" && !m.files.count(p.filename().string())) {
      fs::remove(p);
      ++sum.removed;
    }
  sum.files = set.files.size();
  sum.uncovered = set.uncovered;
  return sum;
}

}  // namespace ts
