#include "goldens/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/case_rules.h"
#include "goldens/files.h"
#include "goldens/manifest.h"
#include "gpu/plans/registry.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string g17(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Whether the tensors and dtype of a well-formed file fit its operator; "" if they do. Inputs may
// be missing: that is a contract rule (inputs_present) a reject golden may test.
std::string misfit(const OpDef* op, const Golden& g) {
  if (!op) return cat("unknown operator '", g.op, "' (see touchstone list)");
  if (std::find(op->dtypes.begin(), op->dtypes.end(), g.dtype) == op->dtypes.end()) {
    std::vector<std::string> names;
    for (DType t : op->dtypes) names.emplace_back(dtype_name(t));
    return cat(op->name, " is not defined for dtype ", dtype_name(g.dtype), " (defined: ", joined(names), ")");
  }
  for (auto& [name, _] : g.inputs)
    if (!contains(op->inputs, name))
      return cat("tensor '", name, "' is not an input of ", op->name, " (inputs: ", joined(op->inputs),
                 "; informative tensors are named aux.*)");
  for (auto& [name, _] : g.expected)
    if (!contains(op->outputs, name))
      return cat("expected.", name, " names no output of ", op->name, " (outputs: ", joined(op->outputs), ")");
  if (!g.reject)
    for (auto& name : op->outputs)
      if (!g.expected.count(name)) return cat("expect is pass but expected.", name, " is missing");
  // A case id the file carries is held to the operator's declaration like any other: a layout it
  // does not allow would otherwise be verified in another layout and pass.
  if (g.case_id) try {
      check_case(*op, Case::parse(*g.case_id));
    } catch (const UsageError& e) {
      return cat("metadata 'case': ", e.what());
    }
  return "";
}

// How far the reference's own outputs may be from the file's: float64-tight, not the backends'
// tolerance. The reference is float64 and deterministic up to summation order (which may differ
// between machines: vectorised Eigen kernels, the AVX2 or portable GEMM). A float64 sum of n terms
// in another order moves by at most about n * 2^-53 of the sum of their magnitudes; for these
// operators (up to a few hundred products per score or output, softmax weights that sum to 1,
// scores up to ~1e3 for the large-logit cases) that stays near 1e-13 of the output's largest
// magnitude. Measured: 989 valid cases (every edge case and 80 drawn per operator and dtype, large
// logits up to D=256 included) written by the default build verify with the reference of an
// -march=native (AVX-512 Eigen) build at worst 0.0012 of this tolerance. It stays 6000x below
// float32's unit roundoff (2^-24 ~ 6e-8): expected values rounded to float32 (or float16,
// bfloat16) on their way into the file, or scaled by 1.01, fail. The atol term, relative to the
// largest finite magnitude of the reference's output (not the file's, which a bad file could
// inflate), covers elements near zero whose value came from cancelling large terms.
constexpr double kReferenceTightness = 1e-11;

Tolerance reference_tolerance(const Tensor& ref) {
  double max = 0;
  for (int64_t i = 0; i < ref.numel(); ++i)
    if (double v = std::fabs(ref.get(i)); std::isfinite(v)) max = std::max(max, v);
  return {kReferenceTightness * max, kReferenceTightness};
}

// Recomputes the file's outputs with the reference and compares them with what the file holds:
// computed (float64) and integer outputs float64-tight, exact copies exactly. The file's own
// tolerance is for backends only: a loose one must not let the reference accept wrong values.
void reproduce(const GoldenCheck& g, CaseResult& r) {
  Tensors outs;
  try {
    outs = g.expected.op->reference(g.expected.problem);
  } catch (const std::exception& e) {
    r.outcome = Outcome::error;
    r.detail = cat("the reference threw: ", e.what());
    return;
  }
  std::string detail;
  auto add = [&](const std::string& s) { detail += (detail.empty() ? "" : "; ") + s; };
  for (auto& [name, want] : g.golden.expected) {
    auto it = outs.find(name);
    if (it == outs.end()) {
      add(cat("the reference computes no output '", name, "'"));
      continue;
    }
    const Tensor& got = it->second;
    if (got.dtype != want.dtype || got.shape != want.shape) {
      add(cat("expected.", name, " is ", want.describe(), " but the reference computes ", got.describe(),
              got.dtype == DType::f64 && want.dtype != DType::f64 ? " (computed float outputs are stored as float64)" : ""));
      continue;
    }
    Tolerance tol = want.dtype == DType::f64 || !is_float(want.dtype) ? reference_tolerance(got) : Tolerance{};
    CompareReport rep = compare(name, got, want, tol, false);
    r.worst = std::max(r.worst, rep.worst);
    if (!rep.ok())
      add(cat("expected.", name, ": ", rep.mismatches, " of ", rep.count, " elements differ from the reference; first at ",
              index_str(want.shape, rep.first_bad), ": reference ", g17(rep.first_got), ", file ", g17(rep.first_want),
              " (atol ", tol.atol, ", rtol ", tol.rtol, ")"));
    r.reports.push_back(std::move(rep));
  }
  r.outcome = detail.empty() ? Outcome::pass : Outcome::fail;
  r.detail = detail;
}

void check_with_reference(GoldenCheck& g) {
  const Golden& f = g.golden;
  Expected& e = g.expected;
  CaseResult& r = g.reference;
  e.op = find_op(f.op);
  e.c = f.case_id ? Case::parse(*f.case_id) : Case{f.op, {}, f.dtype, "buffer", f.seed.value_or(0)};
  e.problem.inputs = f.inputs;
  e.problem.params = f.params;
  e.problem.dtype = f.dtype;
  e.problem.storage = e.c.storage;
  std::optional<Violation> verdict;
  try {
    // A file that names its case and holds exactly the inputs that case makes: how they were made
    // (Problem::made_from) holds too, so a backend that computes some inputs itself (ggml's RoPE
    // angles) can verify it. Any other file's inputs are taken as arbitrary.
    // make() runs under the file's own input size: a case id naming a huge case builds nothing.
    if (f.case_id && !f.reject) try {
        uint64_t bytes = 4096;
        for (auto& [name, t] : f.inputs) bytes += t.nbytes();
        AllocationLimit cap(bytes);
        const Problem made = e.op->make(e.c);
        bool same = made.params == f.params && made.inputs.size() == f.inputs.size();
        for (auto& [name, t] : made.inputs) {
          auto it = f.inputs.find(name);
          same = same && it != f.inputs.end() && it->second.dtype == t.dtype && it->second.shape == t.shape &&
                 it->second.bytes == t.bytes;
        }
        if (same) e.problem.made_from = made.made_from;
      } catch (const std::exception&) {
        // Not the case's own inputs (or not a case make() takes): arbitrary inputs, as any file's.
      }
    verdict = e.op->validate(e.problem);
    // A file's params can make a small input's outputs huge (a conv2d's stride, padding and
    // dilation): sized from shapes before the tolerance (an output-sized tensor), the reference or
    // any backend computes them.
    if (!verdict && !f.reject) check_case_size(*e.op, e.problem);
    if (!f.reject) {
      e.outputs = f.expected;
      // The operator's tolerance function reads the inputs, so it is only asked for valid ones.
      e.tol = f.tolerance ? *f.tolerance : verdict ? Tolerance{} : e.op->tolerance(e.problem);
    }
  } catch (const CaseTooLarge& ex) {
    r.outcome = Outcome::error;
    r.detail = e.error = cat("not computed: ", ex.what());
    return;
  } catch (const std::exception& ex) {
    r.outcome = Outcome::error;
    r.detail = e.error = cat("the reference's contract check threw: ", ex.what());
    return;
  }
  if (f.reject) {
    if (verdict) {
      e.violation = verdict;
      r.outcome = Outcome::rejected;
      r.rule = verdict->rule;
      r.detail = verdict->message;
    } else {
      r.outcome = Outcome::missed_reject;
      r.detail = "the golden expects a rejection but the reference accepts the case";
      e.error = "not judged: the reference accepts this case, so there is no rule id to compare with";
    }
  } else if (verdict) {
    r.outcome = Outcome::unexpected_reject;
    r.detail = cat("the golden expects a pass but the reference rejects it: ", verdict->message);
  } else {
    reproduce(g, r);
  }
}

}  // namespace

GoldenCheck check_golden(const std::string& path) {
  auto t0 = std::chrono::steady_clock::now();
  GoldenCheck g;
  g.file = path;
  g.reference.id = path;
  g.reference.backend = "reference";
  try {
    g.golden = read_golden(path);
    g.error = misfit(find_op(g.golden.op), g.golden);
  } catch (const std::exception& e) {  // FormatError, or bad_alloc for a file too large to hold twice
    g.error = e.what();
  }
  if (!g.error.empty()) {
    g.reference.outcome = Outcome::error;
    g.reference.detail = "malformed golden file: " + g.error;
  } else {
    check_with_reference(g);
  }
  g.reference.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return g;
}

CaseResult judge_golden(const GoldenCheck& g, Backend& backend) {
  CaseResult r;
  if (g.error.empty()) {
    r = judge(g.expected, backend);
  } else {
    r.backend = std::string(backend.kind());
    r.detail = g.error;
  }
  r.id = g.file;
  return r;
}

std::vector<std::string> golden_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".safetensors") files.push_back(it->path().string());
  if (ec) throw UsageError(cat("cannot list golden directory ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> verify_manifest(const std::string& dir, const std::vector<std::string>& only) {
  std::vector<std::string> problems;
  const std::string marker = (fs::path(dir) / kRegenMarkerName).string();
  if (!describe_path(marker).empty())
    problems.push_back(cat(marker, ": a golden regen started renaming files into ", dir,
                           " and never finished (killed?), so the directory mixes two sets; run touchstone golden "
                           "regen --dir ", dir));
  const std::string path = (fs::path(dir) / kManifestName).string();
  if (describe_path(path).empty()) {
    // Files named one by one verify on their own; a directory verified as a set needs its
    // manifest to say that the set is complete and current, and must not look all good without.
    if (only.empty())
      problems.push_back(cat(path, ": missing, so whether the set in ", dir,
                             " is complete and current cannot be checked (golden regen writes one; to verify "
                             "files without a manifest, name them: touchstone golden verify ", dir, "/*.safetensors)"));
    return problems;
  }
  try {
    for (auto& p : manifest_problems(dir, parse_manifest(read_file(path, kMaxManifestBytes), path), only))
      problems.push_back(std::move(p));
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  return problems;
}

}  // namespace ts
