// touchstone golden: regenerate, verify, export and inspect golden tensor files.
#include "tools/golden_cmd.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "core/case_rules.h"
#include "core/layout.h"
#include "goldens/files.h"
#include "goldens/regen.h"
#include "tools/golden_reach.h"
#include "goldens/verify.h"
#include "gpu/plans/registry.h"
#include "tools/backends.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/junit.h"
#include "tools/shell_quote.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
constexpr const char* kDefaultDir = "goldens";

using Options = GoldenOptions;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool bad(Outcome o) { return o != Outcome::pass && o != Outcome::rejected && o != Outcome::unsupported; }

int regen(const Options& o, const std::vector<std::string>& rest) {
  if (!rest.empty()) throw UsageError("golden regen takes no positional arguments (use --dir DIR)");
  const std::string dir = o.dir.empty() ? kDefaultDir : o.dir;
  auto t0 = std::chrono::steady_clock::now();
  RegenSummary s;
  try {
    s = regenerate(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: golden regen: %s\n", e.what());
    return 1;
  }
  std::printf("%zu goldens (%zu bytes) in %s: %zu rewritten, %zu unchanged, %zu stale removed; %.2f s\n", s.files,
              s.bytes, dir.c_str(), s.changed, s.files - s.changed, s.removed, since(t0));
  for (auto& [what, why] : s.uncovered) std::printf("  no golden for %s: %s\n", what.c_str(), why.c_str());
  std::vector<Case> cases;
  for (auto& id : s.pass_cases) cases.push_back(Case::parse(id));
  for (auto& line : beyond_generators(cases)) std::printf("  beyond the generators: %s\n", line.c_str());
  for (auto& name : s.left_alone) {
    auto why = s.not_ours.find(name);
    std::printf("  left alone: %s (%s)\n", name.c_str(),
                why == s.not_ours.end() ? "not written by golden regen: not in its manifest"
                                        : cat("listed by the previous set, but ", why->second, ": not provably regen's").c_str());
  }
  return 0;
}

// Manifest problems of every directory the files come from; with --dir, of the whole directory.
std::vector<std::string> manifest_findings(const std::vector<std::string>& files, const std::string& dir) {
  if (!dir.empty()) return verify_manifest(dir, {});
  std::map<std::string, std::vector<std::string>> by_dir;
  for (auto& f : files) by_dir[fs::path(f).parent_path().string()].push_back(fs::path(f).filename().string());
  std::vector<std::string> all;
  for (auto& [d, names] : by_dir)
    for (auto& p : verify_manifest(d.empty() ? "." : d, names)) all.push_back(p);
  return all;
}

// --layout: the storage must parse, and each override must name a tensor of some operator (a typo
// would otherwise go unnoticed). Each golden takes the default and the overrides that name its own
// tensors (`cos=buffer` is about the operators that have a tensor named cos, not about the others);
// whether its operator declares the result for every tensor is decided per golden (laid_out_as).
void check_layout_option(const std::string& layout) {
  const Storage st = Storage::parse(layout);
  for (auto& [tensor, _] : st.overrides) {
    bool known = false;
    for (const OpDef* op : all_ops())
      for (const auto* names : {&op->inputs, &op->outputs})
        known |= std::find(names->begin(), names->end(), tensor) != names->end();
    if (!known) throw UsageError(cat("--layout '", layout, "': no operator has a tensor named '", tensor, "' (see touchstone list)"));
  }
}

// The storage of --layout as it applies to `op`: the overrides of other operators' tensors dropped.
// Throws UsageError, naming the tensor and what it allows, when `op` does not declare it.
std::string laid_out_as(const OpDef& op, const std::string& layout) {
  Storage st = Storage::parse(layout);
  std::erase_if(st.overrides, [&](auto& kv) {
    return std::find(op.inputs.begin(), op.inputs.end(), kv.first) == op.inputs.end() &&
           std::find(op.outputs.begin(), op.outputs.end(), kv.first) == op.outputs.end();
  });
  const std::string mine = st.text();
  check_storage(op, mine);
  return mine;
}

int verify(const Options& o, std::vector<std::string> files) {
  std::string dir = o.dir;
  const std::string& junit = o.junit;
  const bool reference_only = o.reference_only;
  if (reference_only && o.backends.given) throw UsageError("--reference-only runs no backend; drop the backend options");
  // Goldens hold logical tensors and the reference never sees a layout: --layout is for backends.
  if (reference_only && !o.layout.empty()) throw UsageError("--layout chooses how backends store the tensors; --reference-only runs none");
  if (!o.layout.empty()) check_layout_option(o.layout);
  if (!junit.empty()) check_output_path(junit);
  std::vector<BackendSlot> slots;
  if (!reference_only) slots = open_backends(o.backends);
  if (!dir.empty() && !files.empty()) throw UsageError("golden verify takes FILES or --dir DIR, not both");
  if (files.empty()) {
    if (dir.empty()) dir = kDefaultDir;
    files = golden_files(dir);
    if (files.empty()) throw UsageError(cat("no .safetensors files in ", dir));
  }

  if (!reference_only) {
    if (int rc = report_backends(slots, " (--reference-only verifies against the reference alone)")) return rc;
    print_kernels(o.backends.kernels);
  }

  auto t0 = std::chrono::steady_clock::now();
  KernelUse use(o.backends.kernels);
  std::vector<std::string> findings = manifest_findings(files, dir);
  // JUnit groups: the reference, then one per backend slot, then the manifest.
  std::vector<std::pair<std::string, std::vector<CaseResult>>> groups = {{"golden/reference", {}}};
  for (auto& s : slots) groups.push_back({"golden/" + s.name, {}});
  if (!o.layout.empty()) std::printf("\nBackends store every tensor as --layout '%s'\n", o.layout.c_str());
  size_t width = 4;
  for (auto& f : files) width = std::max(width, (dir.empty() ? f : fs::path(f).filename().string()).size());
  std::string head = cat("%-", width, "s");
  std::printf("\n");
  std::printf(head.c_str(), "file");
  std::printf("  %-7s %-17s", "expect", "reference");
  for (auto& s : slots) std::printf(" %-17s", s.name.c_str());
  std::printf("\n");

  bool failed = !findings.empty();
  std::vector<std::string> details, skipped;
  size_t laid_out = 0;  // goldens the backends ran in --layout
  auto record = [&](size_t group, CaseResult r) {
    if (bad(r.outcome)) {
      failed = true;
      details.push_back(cat(r.id, " [", r.backend, "] ", outcome_name(r.outcome), ": ", r.detail));
    }
    groups[group].second.push_back(std::move(r));
  };
  for (auto& f : files) {
    GoldenCheck g = check_golden(f);
    std::printf(head.c_str(), (dir.empty() ? f : fs::path(f).filename().string()).c_str());
    if (!g.error.empty()) {
      std::printf("  MALFORMED\n");
      record(0, g.reference);
      continue;
    }
    std::printf("  %-7s %-17s", g.golden.reject ? "reject" : "pass", std::string(outcome_name(g.reference.outcome)).c_str());
    record(0, g.reference);
    if (!o.layout.empty() && !slots.empty()) {
      // The golden's own case (or the bare one of a foreign file) in the chosen storage, if its
      // operator declares that storage for every tensor; else it is skipped, saying why.
      try {
        g.expected.c.storage = g.expected.problem.storage = laid_out_as(*g.expected.op, o.layout);
        ++laid_out;
      } catch (const UsageError& e) {
        for (size_t k = 0; k < slots.size(); ++k) std::printf(" %-17s", "SKIPPED");
        std::printf("\n");
        skipped.push_back(cat(dir.empty() ? f : fs::path(f).filename().string(), ": ", e.what()));
        continue;
      }
    }
    for (size_t k = 0; k < slots.size(); ++k) {
      if (!slots[k].backend) {
        std::printf(" %-17s", "UNAVAILABLE");
        continue;
      }
      CaseResult r = judge_golden(g, *slots[k].backend);
      std::printf(" %-17s", std::string(outcome_name(r.outcome)).c_str());
      use.count(r.backend, r.kernels);
      record(k + 1, std::move(r));
    }
    std::printf("\n");
  }
  if (!findings.empty()) {
    std::printf("\nManifest:\n");
    auto& group = groups.emplace_back("golden/manifest", std::vector<CaseResult>{}).second;
    for (auto& p : findings) {
      std::printf("  %s\n", p.c_str());
      CaseResult r;
      r.id = p.substr(0, p.find(':'));
      r.backend = "manifest";
      r.detail = p;
      group.push_back(r);
    }
  }
  if (!details.empty()) {
    std::printf("\nProblems:\n");
    for (auto& d : details) std::printf("  %s\n", d.c_str());
  }
  if (!skipped.empty()) {
    std::printf("\nNot run on the backends under --layout '%s' (verified by the reference alone):\n", o.layout.c_str());
    for (auto& s : skipped) std::printf("  %s\n", s.c_str());
  }
  if (!reference_only) use.print();
  std::printf("\n%zu golden files verified in %.2f s%s: %s\n", files.size(), since(t0),
              skipped.empty() ? "" : cat(", ", skipped.size(), " of them by the reference alone (--layout)").c_str(),
              failed ? "FAILED" : "all good");
  if (!junit.empty())
    write_junit(junit, groups, [&](const CaseResult& r) {
      if (r.backend == "manifest") return cat("touchstone golden verify --dir ", shell_quote(o.dir.empty() ? "goldens" : o.dir));
      if (r.backend == "reference") return cat("touchstone golden verify ", shell_quote(r.id), " --reference-only");
      return cat("touchstone golden verify ", shell_quote(r.id), " --backend ", r.backend,
                 o.layout.empty() ? "" : cat(" --layout ", shell_quote(o.layout)));
    });
  // Asked to run goldens in a storage and none could be: nothing was checked as asked.
  if (!o.layout.empty() && !slots.empty() && laid_out == 0) {
    std::fprintf(stderr, "error: no golden's operator declares --layout '%s' for all of its tensors (see above)\n",
                 o.layout.c_str());
    return 2;
  }
  return failed ? 1 : 0;
}

int export_case(const Options& o, const std::vector<std::string>& rest) {
  std::string out = o.out;
  if (rest.size() != 1) throw UsageError("golden export takes exactly one case id");
  Case c = parse_case(rest[0]);
  if (out.empty()) {
    out = c.id();
    for (char& ch : out)
      if (ch == '/') ch = '-';
    out += ".safetensors";
  }
  check_output_path(out);  // before the reference runs: a bad destination costs nothing
  Golden g = golden_from_case(c);
  write_golden(out, g);
  std::printf("wrote %s: %s, expect %s\n", out.c_str(), c.id().c_str(), g.reject ? "reject" : "pass");
  return 0;
}

void print_stats(const std::string& name, const Tensor& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nan = 0, inf = 0, finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    if (std::isnan(v)) ++nan;
    else if (std::isinf(v)) ++inf;
    else {
      lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
      ++finite;
    }
  }
  std::printf("  %-22s %-9s %-16s", name.c_str(), std::string(dtype_name(t.dtype)).c_str(), shape_str(t.shape).c_str());
  if (finite) std::printf(" min %-12.6g max %-12.6g mean %-12.6g", lo, hi, sum / double(finite));
  else std::printf(" %-51s", "no finite values");
  std::printf(" NaN %lld Inf %lld\n", (long long)nan, (long long)inf);
}

int show(const std::vector<std::string>& files) {
  if (files.empty()) throw UsageError("golden show takes one or more golden files");
  int rc = 0;
  for (auto& f : files) {
    Golden g;
    try {
      g = read_golden(f);
    } catch (const std::exception& e) {  // FormatError, or bad_alloc: one bad file is one MALFORMED entry
      std::printf("%s\n  MALFORMED: %s\n", f.c_str(), e.what());
      rc = 1;
      continue;
    }
    std::printf("%s\n  op %s, dtype %s, expect %s\n  source %s\n", f.c_str(), g.op.c_str(),
                std::string(dtype_name(g.dtype)).c_str(), g.reject ? "reject" : "pass", g.source.c_str());
    std::printf("  params %s\n", g.params.dump().c_str());
    if (g.case_id) std::printf("  case %s\n", g.case_id->c_str());
    if (g.seed) std::printf("  seed %llu\n", (unsigned long long)*g.seed);
    if (g.tolerance) std::printf("  tolerance atol %g rtol %g\n", g.tolerance->atol, g.tolerance->rtol);
    for (auto& [k, v] : g.extra) std::printf("  %s %s\n", k.c_str(), v.c_str());
    for (auto& [n, t] : g.inputs) print_stats(n, t);
    for (auto& [n, t] : g.expected) print_stats("expected." + n, t);
    for (auto& [n, t] : g.aux) print_stats(n, t);
  }
  return rc;
}

}  // namespace

int cmd_golden(const GoldenOptions& o) {
  if (o.sub == "regen") return regen(o, o.args);
  if (o.sub == "verify") return verify(o, o.args);
  if (o.sub == "export") return export_case(o, o.args);
  if (o.sub == "show") return show(o.args);
  throw UsageError(cat("unknown golden subcommand '", o.sub, "' (regen, verify, export, show)"));
}

Command add_golden_command(CLI::App& app) {
  // One set of values for the four subcommands: only one of them parses.
  struct Args {
    std::string id, dir, out, junit, layout;
    std::vector<std::string> files;
    bool reference_only = false;
    BackendArgs backends;
  };
  auto a = std::make_shared<Args>();
  CLI::App* golden =
      app.add_subcommand("golden", wrap("golden tensor files (touchstone-golden/1 safetensors; goldens/README.md)"));
  golden->require_subcommand(1);
  CLI::App* regen = golden->add_subcommand(
      "regen", wrap("rewrite the golden set from the references: the smallest valid edge cases, the smallest "
                    "case of each shape class they miss, and one rejected case per contract rule, per operator "
                    "and dtype. Deterministic and atomic; MANIFEST.json records each file's sha256 and the hash "
                    "of the reference sources. Removes only files its previous manifest listed; a second regen "
                    "of the same DIR at once refuses (lock file DIR/.regen.lock)"));
  single_option(regen, "--dir", a->dir, "DIR", "the golden directory (default goldens)");
  CLI::App* verify = golden->add_subcommand(
      "verify", wrap("per file: the reference still reproduces the expected outputs to float64 precision, "
                     "every backend matches them within the operator's (or the file's) tolerance, and reject "
                     "files are rejected by all with the same rule id; prints a file x backend table. A malformed "
                     "file (or one that is not a regular file) is one MALFORMED row and the run goes on. With a "
                     "MANIFEST.json, stale goldens (reference sources changed since regen) and hand-edited files "
                     "fail; a --dir without MANIFEST.json, or left mid-commit by a killed regen, fails (exit 1): "
                     "name files to verify them without a manifest. Files made by other tools verify the same "
                     "way. Exit 0 all good, 1 any failure, 2 usage or set-up error"));
  verify->add_option("FILES", a->files, "golden files (default: every file of --dir)")->type_name("");
  single_option(verify, "--dir", a->dir, "DIR", "verify every .safetensors file of DIR (default goldens)");
  flag_option(verify, "--reference-only", a->reference_only, "the reference alone, no backend");
  single_option(verify, "--layout", a->layout, "STORAGE",
                "run every golden on the backends in this storage (a case id's storage part, e.g. "
                "texture3d_c;cos=buffer) instead of its own; goldens stay logical. A golden whose operator does "
                "not declare it for some tensor is skipped with the reason; none left to run is exit 2");
  single_option(verify, "--junit", a->junit, "FILE", "write JUnit XML; checked before the run starts");
  add_backend_options(verify, a->backends);
  CLI::App* exp = golden->add_subcommand(
      "export", wrap("one case as a golden file (valid: expected outputs; invalid: expect=reject)"));
  exp->add_option("CASE_ID", a->id, "the case")->required()->type_name("");
  single_option(exp, "-o", a->out, "FILE",
                "where to write (default: the case id with '/' as '-', .safetensors); a new or regular file: links "
                "and special files are refused");
  CLI::App* show = golden->add_subcommand(
      "show", wrap("metadata, and each tensor's dtype, shape, min, max, mean, NaN/Inf counts"));
  show->add_option("FILES", a->files, "golden files")->required()->type_name("");
  return {golden, [golden, verify, exp, a] {
            GoldenOptions o;
            CLI::App* sub = golden->get_subcommands().at(0);
            o.sub = sub->get_name();
            o.args = sub == exp ? std::vector<std::string>{a->id} : a->files;
            o.dir = a->dir;
            o.junit = a->junit;
            o.out = a->out;
            o.reference_only = a->reference_only;
            o.layout = a->layout;
            if (sub == verify) o.backends = backend_options(a->backends, verify);
            for (const std::string* out : {&o.junit, &o.out})
              if (!out->empty()) check_output_path(*out);  // before the work, not after it
            std::vector<NamedFile> in;
            for (const std::string& f : a->files) in.push_back({"golden file", f});
            require_distinct({{"--junit", o.junit}, {"-o", o.out}}, o.backends.kernels, in);
            return cmd_golden(o);
          }};
}

}  // namespace ts
