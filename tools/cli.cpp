// The command line, defined once: every command, option and subcommand with its help text, from
// which `--help` is generated (CLI11). Option values arrive as text and are converted here with
// strict rules (tools/options.h); every usage error exits 2 with a message before any work starts.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "core/case.h"
#include "goldens/files.h"
#include "tools/commands.h"
#include "tools/environment.h"
#include "tools/golden_cmd.h"
#include "tools/report_file.h"

namespace ts {
namespace {

// Breaks a help text into lines of at most `width` columns at spaces; the formatter indents them.
std::string wrap(std::string_view text, size_t width = 66) {
  std::string out;
  size_t line = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      out += '\n';
      line = 0;
      ++i;
      continue;
    }
    size_t end = text.find_first_of(" \n", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out.append(word);
    line += word.size();
    i = end < text.size() && text[end] == ' ' ? end + 1 : end;
  }
  return out;
}

// Nested subcommands (golden verify, ...) are shown in full in `touchstone --help` too.
class Formatter : public CLI::Formatter {
 public:
  std::string make_expanded(const CLI::App* sub) const override {
    std::string out = sub->get_display_name(true) + "\n" + make_description(sub) + make_positionals(sub) +
                      make_groups(sub, CLI::AppFormatMode::Sub) + make_subcommands(sub, CLI::AppFormatMode::All);
    std::string tmp = std::regex_replace(out, std::regex("\n\n+"), "\n");
    if (!tmp.empty() && tmp.back() == '\n') tmp.pop_back();
    return std::regex_replace(tmp, std::regex("\n"), "\n  ") + "\n";
  }
};

const char* const kDescription =
    "touchstone — differential testing of GPU kernels of LLM operators against float64 references\n"
    "(touchstone COMMAND --help: one command alone)";

const char* const kFooter = R"(case ids
  <op>/<k=v,...>/<dtype>/<storage>/seed=<n>, e.g.
  rope_llama/B=1,S=1,Hq=32,Hkv=8,D=128/float16/buffer/seed=1234
  An id determines the case completely, data included (counter-based data from the seed, see
  core/rng.h): the same id gives the same bytes on any machine. Ids are strict: every variable
  must be one the operator declares, of its kind and in range (`touchstone list` shows them), the
  dtype one it defines, and the storage a layout with optional per-tensor overrides
  (texture3d_c;freqs_cos=buffer) that the operator allows for each tensor; anything else is a
  usage error (exit 2) naming it. A case over 2 GiB of tensors is refused before it is built.

outcomes
  PASS, FAIL (values out of tolerance, never-written elements, writes outside the tensor),
  REJECTED (reference and backend reject with the same rule id), UNEXPECTED_REJECT, MISSED_REJECT
  (backend and reference disagree on validity or rule id), UNSUPPORTED (a stated missing device
  capability), ERROR (compile error, validation message, timeout, crash); with --xfail, XFAIL (a
  listed known failure: does not fail the run) and XPASS (listed, but passed: fails the run); with
  --expect, UNEXPECTED_UNSUPPORTED (UNSUPPORTED for a capability the device profile requires: fails the run)

exit codes
  0 all good, 1 any FAIL/ERROR/UNEXPECTED_REJECT/MISSED_REJECT/XPASS/UNEXPECTED_UNSUPPORTED (or --fail-fast
  stopped the run),
  2 usage or set-up error (also: shards that do not fit in merge; a
  backend named with --backend is UNAVAILABLE, or check found no GPU backend at all),
  130 / 143 a sweep stopped by SIGINT / SIGTERM (its JUnit report is written, marked interrupted)
)";

// The text of each option, as given; converted once parsing is over.
struct Raw {
  std::vector<std::string> backend, op, dtype, files;
  std::string abi_dtype;
  std::string device, kernels, timeout_ms, compile_timeout_ms, cases, seed, shard, junit, dir, out, id, json, html, xfail,
      expect, match, layout;
  std::vector<std::string> ids;
  std::string size, warmup, warmup_ms, reps, time_ms;
  bool validation = false, no_int_dot = false, quiet = false, reference_only = false, list = false, fail_fast = false, kernel_stats = false;
};

// An option taking one value: given twice, or with an empty value, is a usage error.
CLI::Option* single(CLI::App* app, const std::string& name, std::string& into, const std::string& type,
                    const std::string& help) {
  return app->add_option(name, into, wrap(help, 60))
      ->type_name(type)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw)
      ->check([name](const std::string& v) { return v.empty() ? "needs a non-empty value" : std::string(); });
}

// A comma-separated list; the option may be repeated, each time with one value.
CLI::Option* list(CLI::App* app, const std::string& name, std::vector<std::string>& into, const std::string& type,
                  const std::string& help) {
  return app->add_option(name, into, wrap(help, 60))->type_name(type)->allow_extra_args(false);
}

CLI::Option* flag(CLI::App* app, const std::string& name, bool& into, const std::string& help) {
  return app->add_flag(name, into, wrap(help, 60))->multi_option_policy(CLI::MultiOptionPolicy::Throw)->disable_flag_override();
}

void add_backend_options(CLI::App* app, Raw& r) {
  const std::string group = "Backend options";
  list(app, "--backend", r.backend, "B[,B...]",
       "vulkan, webgpu or all (default: all, UNAVAILABLE ones shown and warned about); a named backend "
       "that cannot run here is an error, exit 2")
      ->group(group);
  single(app, "--device", r.device, "SEL",
         "the device of both backends: an index or a case-insensitive name substring of the Vulkan devices "
         "`touchstone list` shows (WebGPU runs Dawn's Vulkan adapter of that device; default: a GPU, else lavapipe). "
         "One that matches nothing makes each backend UNAVAILABLE, naming the devices found")
      ->group(group);
  flag(app, "--validation", r.validation,
       "Khronos validation layer (or TOUCHSTONE_VALIDATION=1; 0 or 1, anything else is a usage error): any message "
       "makes the case ERROR")
      ->group(group);
  flag(app, "--no-int-dot", r.no_int_dot,
       "int8 kernels take their scalar path even where the device has a packed integer dot product "
       "(`list` shows int8-dot-product or int8-dot-product=off)")
      ->group(group);
  single(app, "--timeout-ms", r.timeout_ms, "MS", "per-case GPU timeout, 1..86,400,000 (default 20000): a hung kernel is ERROR")
      ->group(group);
  single(app, "--compile-timeout-ms", r.compile_timeout_ms, "MS",
         "budget for compiling, on top of --timeout-ms, 1..86,400,000 (default 300000): a first dispatch where the "
         "device compiles (lavapipe), a WebGPU request with shaders new to its worker, a worker's start. "
         "Exceeding it is an ERROR that says so")
      ->group(group);
  single(app, "--kernels", r.kernels, "DIR",
         "your kernels (or TOUCHSTONE_KERNELS=DIR): DIR/<kernel>.comp (Vulkan GLSL) and DIR/<kernel>.wgsl (WebGPU) "
         "replace the built-in kernel of that name (a Dispatch::kernel stem such as rope_half, sdpa_qk_tiled, "
         "q8ta_linear_gemv); references, plans, sweeps and goldens are unchanged. `touchstone abi OP` prints the "
         "interface such a file must follow. A file naming no built-in kernel is a usage error; one that does not "
         "compile or binds a tensor the plan lacks makes that op's cases ERROR, naming the file and line")
      ->group(group);
}

BackendOptions backend_options(const Raw& r, const CLI::App* app) {
  BackendOptions o;
  o.names = split_list("--backend", r.backend);
  o.device = r.device;
  o.validation = r.validation || env_validation();
  o.int_dot = !r.no_int_dot;
  if (!r.timeout_ms.empty()) o.timeout_ms = uint32_t(parse_integer("--timeout-ms", r.timeout_ms, 1, kMaxTimeoutMs));
  if (!r.compile_timeout_ms.empty())
    o.compile_timeout_ms = uint32_t(parse_integer("--compile-timeout-ms", r.compile_timeout_ms, 1, kMaxTimeoutMs));
  if (!r.kernels.empty()) o.kernels = load_kernel_dir(r.kernels);
  else if (const auto dir = env_kernels()) o.kernels = load_kernel_dir(*dir);
  for (const char* name : {"--backend", "--device", "--validation", "--no-int-dot", "--timeout-ms", "--compile-timeout-ms", "--kernels"})
    if (app->get_option_no_throw(name) && app->count(name)) o.given = true;
  return o;
}

// CLI11's wording of the usage errors it finds, in the words of the rest of touchstone.
std::string usage_message(const CLI::ParseError& e) {
  std::string m = e.what();
  std::smatch g;
  if (std::regex_match(m, g, std::regex("(\\S+): At Most 1 required but received \\d+")))
    return g[1].str() + " was given more than once (give it once)";
  if (std::regex_match(m, g, std::regex("(\\S+) was given a disallowed flag override")))
    return "--" + g[1].str() + " is a switch and takes no value";
  if (std::regex_match(m, g, std::regex("The following arguments? (?:was|were) not expected: (.*)")))
    return "unexpected argument " + g[1].str() + " (an unknown option, or a value this command does not take)";
  if (std::regex_match(m, g, std::regex("(\\S+): \\d+ required .* missing")))
    return g[1].str() + " needs a value";
  return m;
}

// The files a command reads and writes, checked with check_distinct_files: its outputs (those
// given), and its inputs, `extra` and the files of --kernels DIR.
void require_distinct(std::initializer_list<NamedFile> outputs, const KernelDir& kernels, std::vector<NamedFile> extra = {}) {
  std::vector<NamedFile> out;
  for (const NamedFile& f : outputs)
    if (!f.path.empty()) out.push_back(f);
  for (const KernelFile& k : kernels.files) extra.push_back({"--kernels file", k.path});
  check_distinct_files(out, extra);
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app(kDescription, "touchstone");
  app.formatter(std::make_shared<Formatter>());
  app.footer(kFooter);
  app.require_subcommand(1);
  app.get_formatter()->column_width(30);
  Raw r;

  CLI::App* list_cmd = app.add_subcommand(
      "list", wrap("operators (inputs, outputs, dtypes, contract rules with their ids) and backends (device "
                   "name and capabilities, or why UNAVAILABLE)"));
  add_backend_options(list_cmd, r);

  CLI::App* check = app.add_subcommand(
      "check", wrap("sweep operators x backends x dtypes and compare every backend with the reference; prints a "
                    "table, the coverage of shape classes and, per failing op/backend/dtype, its smallest failing "
                    "case (shrunk with the generators) as a repro line and a count of the rest. Cases are "
                    "made as they run: memory does not grow with --cases. Ctrl-C (SIGINT) or SIGTERM stops "
                    "after the current case, writes the partial report marked interrupted and exits 130 / 143"));
  list(check, "--op", r.op, "NAME[,NAME...]", "operators (default: all; see `touchstone list`)");
  list(check, "--dtype", r.dtype, "T[,T...]",
       "float32, float16, bfloat16 (default: every dtype the operator defines). A dtype a named --op does "
       "not define is a usage error; without --op, operators that do not define it are left out. A "
       "backend without kernels for a dtype reports UNSUPPORTED");
  single(check, "--cases", r.cases, "N",
         "cases per operator x dtype, 1..10,000,000 (default 200): the hand-picked edge cases first (valid and "
         "invalid), then cases drawn from the operator's generators, one in five invalid");
  single(check, "--seed", r.seed, "S",
         "seed of the drawn cases, 0..18446744073709551615 (default 1); the same seed gives the same cases");
  single(check, "--shard", r.shard, "I/N",
         "run only cases with index % N == I, 0 <= I < N <= 1,000,000 (no overlap, no gap across shards; "
         "`touchstone merge` joins the shards' --json)");
  single(check, "--junit", r.junit, "FILE",
         "write JUnit XML (one testsuite per op/backend/dtype). Checked before the sweep starts; replaced at "
         "once by a report saying the run has not finished, so an earlier report never looks current");
  single(check, "--json", r.json, "FILE",
         "write the JSON report (schema touchstone-report/1, tools/REPORT_SCHEMA.md): every case with its "
         "outcome, rule, errors per output (max abs, max rel, NMSE, max ULP, worst/tol, mismatches, unwritten) and "
         "seconds; coverage, devices, totals. Checked before the sweep, replaced at once by a placeholder (state "
         "\"running\"), written whole at the end")
      ->group("Reports");
  single(check, "--html", r.html, "FILE",
         "write one self-contained HTML page: the table, coverage and, per failing case (each group's smallest, then "
         "its first few), a heatmap of |error|/tolerance over the output's last two dimensions (the others reduced by "
         "max), the mismatches per dimension and the repro line")
      ->group("Reports");
  single(check, "--xfail", r.xfail, "FILE",
         "known failures: lines `<case id> [backend]  # reason` or `op/backend/dtype  # reason` (parts may be *). "
         "A listed case that fails is XFAIL and does not fail the run; one that passes is XPASS and fails it, as does "
         "a listed group that ran without a failure. A line without a reason is a usage error")
      ->group("Reports");
  single(check, "--expect", r.expect, "PROFILE",
         "a device profile: the capabilities each backend must have (ci/profiles/NAME.json, built in: lavapipe, "
         "nvidia; or a path). A backend lacking one is an error when it opens (exit 2); a case UNSUPPORTED for a "
         "capability the profile requires is UNEXPECTED_UNSUPPORTED and fails the run (exit 1)");
  single(check, "--match", r.match, "REGEX",
         "run only the cases whose id contains a match of REGEX (ECMAScript syntax without back-references or "
         "look-arounds, matched without backtracking; at most 1,000 characters, 32 nested groups, {m,n} up to 100), "
         "e.g. 'D=(2|6),' or '^sdpa/.*pos=0'. One that selects no case is a usage error")
      ->group("Selection");
  flag(check, "--list", r.list, "print the case ids the sweep would run (after --shard and --match), one a line; run "
                                "nothing, open no backend")
      ->group("Selection");
  flag(check, "--fail-fast", r.fail_fast,
       "stop after the first FAIL, ERROR, UNEXPECTED_REJECT, MISSED_REJECT, XPASS or UNEXPECTED_UNSUPPORTED; the summary and the reports "
       "say the run stopped (state \"stopped\"), exit 1")
      ->group("Selection");
  flag(check, "--quiet", r.quiet, "no progress on stderr (on a terminal, a live line: cases done, rate, ETA, failures)");
  add_backend_options(check, r);

  CLI::App* repro = app.add_subcommand(
      "repro", wrap("rerun one case: outcome, input/output digests, first mismatches, error statistics and where "
                    "the errors concentrate"));
  repro->add_option("CASE_ID", r.id, "the case, e.g. rope_half/B=1,H=2,S=3,D=6,pos=5/float16/buffer/seed=9")
      ->required()
      ->type_name("");
  single(repro, "--json", r.json, "FILE", "write the case on every backend as a JSON report (touchstone-report/1)");
  add_backend_options(repro, r);

  CLI::App* bench = app.add_subcommand(
      "bench", wrap("device time of kernels (GPU timestamps around each case's whole dispatch chain): warm-up, "
                    "then repetitions until --time-ms or --reps; per case the median and min in microseconds, GB/s "
                    "from the operator's bytes-moved model and % of a copy kernel's bandwidth measured in the same "
                    "run, GFLOP/s or GOP/s where the operator has an operation model, and the speedup of each "
                    "implementation (impl=) over the first. Without case ids it runs the named suite (RoPE, sdpa "
                    "decode and prefill, q8ta_linear GEMV and GEMM, q8ta_add) with every implementation each "
                    "operator declares. Every case is judged against the reference first, as check does: one that "
                    "is not PASS is shown with its verdict and never timed. Exit 0 when every case passed and was "
                    "timed, 1 otherwise, 2 usage or set-up error"));
  bench->add_option("CASE_IDS", r.ids, "cases to time instead of the suite (without impl=: every implementation)")
      ->type_name("");
  list(bench, "--op", r.op, "NAME[,NAME...]", "only these operators' workloads");
  list(bench, "--dtype", r.dtype, "T[,T...]", "only workloads of these dtypes");
  single(bench, "--match", r.match, "REGEX",
         "only the cases whose id contains a match of REGEX (as check --match); one that selects no case is a usage error");
  single(bench, "--size", r.size, "quick|full",
         "the suite's sizes: full (the issue's shapes) or quick (the same shape classes, smaller); default: "
         "quick on a CPU device (lavapipe), full on a GPU");
  single(bench, "--time-ms", r.time_ms, "MS", "time budget per case, 1..600,000 (default 200; at least 5 repetitions)");
  single(bench, "--reps", r.reps, "N", "at most N timed repetitions per case, 1..1,000,000 (default 1000)");
  single(bench, "--warmup", r.warmup, "N", "untimed repetitions before timing, 0..1000 (default 3)");
  single(bench, "--warmup-ms", r.warmup_ms, "MS",
         "and untimed work until MS milliseconds have passed, 0..60,000, so that the GPU's clock is up "
         "(default 500 on a GPU, 0 on a CPU device)");
  single(bench, "--json", r.json, "FILE", "write the results as JSON (schema touchstone-bench/1, tools/BENCH_SCHEMA.md)");
  flag(bench, "--kernel-stats", r.kernel_stats,
       "print what the driver compiled for each timed case's kernels (Vulkan: VK_KHR_pipeline_executable_properties, "
       "e.g. registers and spills per invocation; `list` shows kernel-statistics where offered); --json always has them");
  add_backend_options(bench, r);

  CLI::App* merge = app.add_subcommand(
      "merge", wrap("combine the --json reports of `check --shard I/N` runs (any machines, any backends each) into "
                    "one report. They must fit: the same sweep (--op, --dtype, --cases, --seed, --match), --xfail list "
                    "and --kernels, every shard 0..N-1 once per backend that ran, no case twice; otherwise each "
                    "problem is named and nothing is written (exit 2). Exit 0 when the merged sweep passes, 1 when "
                    "it has a failure, an XPASS (known-failure patterns are decided here, over every shard) or a "
                    "shard that stopped early"));
  merge->add_option("OUT", r.out, "the merged JSON report")->required()->type_name("");
  merge->add_option("INPUTS", r.files, "the shards' JSON reports")->required()->type_name("");
  single(merge, "--junit", r.junit, "FILE", "also write the merged JUnit XML");
  single(merge, "--html", r.html, "FILE", "also write the merged HTML page");

  CLI::App* abi = app.add_subcommand(
      "abi", wrap("the kernel ABI of an operator: what a file under --kernels DIR must follow. Derived from the "
                  "op's plan on its valid edge cases (one sample per sequence of kernels, e.g. sdpa's naive and "
                  "tiled): per dispatch the kernel stem, defines, invocations and workgroup (how ts_linear_id() "
                  "folds the grid), the uniform / push-constant members with the sample's values, the tensors' "
                  "shapes, dtypes and layouts (TS_INPUT/TS_OUTPUT accessors vs plain arrays) and the built-in "
                  "kernels' bindings; then the preamble and defines each language gets (gpu/ACCESSORS.md)"));
  abi->add_option("OP", r.id, "the operator (see touchstone list)")->required()->type_name("");
  single(abi, "--dtype", r.abi_dtype, "T", "the case dtype whose defines and sample are shown (default: the op's first)");

  CLI::App* golden =
      app.add_subcommand("golden", wrap("golden tensor files (touchstone-golden/1 safetensors; goldens/README.md)"));
  golden->require_subcommand(1);
  CLI::App* regen = golden->add_subcommand(
      "regen", wrap("rewrite the golden set from the references: the smallest valid edge cases, the smallest "
                    "case of each shape class they miss, and one rejected case per contract rule, per operator "
                    "and dtype. Deterministic and atomic; MANIFEST.json records each file's sha256 and the hash "
                    "of the reference sources. Removes only files its previous manifest listed; a second regen "
                    "of the same DIR at once refuses (lock file DIR/.regen.lock)"));
  single(regen, "--dir", r.dir, "DIR", "the golden directory (default goldens)");
  CLI::App* verify = golden->add_subcommand(
      "verify", wrap("per file: the reference still reproduces the expected outputs to float64 precision, "
                     "every backend matches them within the operator's (or the file's) tolerance, and reject "
                     "files are rejected by all with the same rule id; prints a file x backend table. A malformed "
                     "file (or one that is not a regular file) is one MALFORMED row and the run goes on. With a "
                     "MANIFEST.json, stale goldens (reference sources changed since regen) and hand-edited files "
                     "fail; a --dir without MANIFEST.json, or left mid-commit by a killed regen, fails (exit 1): "
                     "name files to verify them without a manifest. Files made by other tools verify the same "
                     "way. Exit 0 all good, 1 any failure, 2 usage or set-up error"));
  verify->add_option("FILES", r.files, "golden files (default: every file of --dir)")->type_name("");
  single(verify, "--dir", r.dir, "DIR", "verify every .safetensors file of DIR (default goldens)");
  flag(verify, "--reference-only", r.reference_only, "the reference alone, no backend");
  single(verify, "--layout", r.layout, "STORAGE",
         "run every golden on the backends in this storage (a case id's storage part, e.g. "
         "texture3d_c;cos=buffer) instead of its own; goldens stay logical. A golden whose operator does "
         "not declare it for some tensor is skipped with the reason; none left to run is exit 2");
  single(verify, "--junit", r.junit, "FILE", "write JUnit XML; checked before the run starts");
  add_backend_options(verify, r);
  CLI::App* exp = golden->add_subcommand(
      "export", wrap("one case as a golden file (valid: expected outputs; invalid: expect=reject)"));
  exp->add_option("CASE_ID", r.id, "the case")->required()->type_name("");
  single(exp, "-o", r.out, "FILE",
         "where to write (default: the case id with '/' as '-', .safetensors); a new or regular file: links "
         "and special files are refused");
  CLI::App* show = golden->add_subcommand(
      "show", wrap("metadata, and each tensor's dtype, shape, min, max, mean, NaN/Inf counts"));
  show->add_option("FILES", r.files, "golden files")->required()->type_name("");

  CLI::App* help = app.add_subcommand("help", "this help");
  // Subcommands copied the plain -h,--help when they were made; `touchstone --help` shows them all.
  app.set_help_flag();
  app.set_help_all_flag("-h,--help", "this help: every command with its options");

  if (argc < 2) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return 2;
  }
  const auto commands = app.get_subcommands({});
  if (argv[1][0] != '-' && std::none_of(commands.begin(), commands.end(), [&](auto* c) { return c->get_name() == argv[1]; })) {
    std::fprintf(stderr, "error: unknown command '%s' (commands: list, check, repro, bench, merge, abi, golden, help; see touchstone --help)\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string m = usage_message(e), where = "touchstone";
    for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
      a = a->get_subcommands().front();
      where += " " + a->get_name();
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e) && golden->parsed() && golden->get_subcommands().empty()) {
      m = "golden needs a subcommand: regen, verify, export or show";
      if (!golden->remaining().empty()) m += ", got '" + golden->remaining().front() + "'";
    }
    std::fprintf(stderr, "error: %s (see %s --help)\n", m.c_str(), where.c_str());
    return 2;
  }

  // A file-size limit (ulimit -f) then fails a write with EFBIG, reported like a full disk, instead
  // of killing the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    check_environment();
    if (help->parsed()) return std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout), 0;
    if (list_cmd->parsed()) return cmd_list({backend_options(r, list_cmd)});
    if (check->parsed()) {
      CheckOptions o;
      o.ops = split_list("--op", r.op);
      o.dtypes = split_list("--dtype", r.dtype);
      if (!r.cases.empty()) o.cases = int64_t(parse_integer("--cases", r.cases, 1, kMaxCases));
      if (!r.seed.empty()) o.seed = parse_integer("--seed", r.seed, 0, UINT64_MAX);
      if (!r.shard.empty()) std::tie(o.shard, o.shards) = parse_shard(r.shard);
      o.junit = r.junit;
      o.json = r.json;
      o.html = r.html;
      o.xfail = r.xfail;
      o.expect = r.expect;
      o.match = r.match;
      o.list = r.list;
      o.fail_fast = r.fail_fast;
      o.quiet = r.quiet;
      o.backends = backend_options(r, check);
      require_distinct({{"--junit", o.junit}, {"--json", o.json}, {"--html", o.html}}, o.backends.kernels,
                       o.xfail.empty() ? std::vector<NamedFile>{} : std::vector<NamedFile>{{"--xfail", o.xfail}});
      return cmd_check(o);
    }
    if (repro->parsed()) {
      if (!r.json.empty()) check_output_path(r.json);
      ReproOptions o{r.id, r.json, backend_options(r, repro)};
      require_distinct({{"--json", o.json}}, o.backends.kernels);
      return cmd_repro(o);
    }
    if (bench->parsed()) {
      BenchOptions o;
      o.ids = r.ids;
      o.ops = split_list("--op", r.op);
      o.dtypes = split_list("--dtype", r.dtype);
      o.match = r.match;
      if (!r.size.empty() && r.size != "quick" && r.size != "full")
        throw UsageError("--size must be quick or full, got '" + r.size + "'");
      o.size = r.size;
      o.json = r.json;
      o.kernel_stats = r.kernel_stats;
      if (!r.time_ms.empty()) o.time_ms = uint32_t(parse_integer("--time-ms", r.time_ms, 1, 600'000));
      if (!r.reps.empty()) o.reps = uint32_t(parse_integer("--reps", r.reps, 1, 1'000'000));
      if (!r.warmup.empty()) o.warmup = uint32_t(parse_integer("--warmup", r.warmup, 0, 1000));
      if (!r.warmup_ms.empty()) o.warmup_ms = parse_integer("--warmup-ms", r.warmup_ms, 0, 60'000);
      o.backends = backend_options(r, bench);
      require_distinct({{"--json", o.json}}, o.backends.kernels);
      return cmd_bench(o);
    }
    if (merge->parsed()) {
      std::vector<NamedFile> in;
      for (const std::string& f : r.files) in.push_back({"input", f});
      require_distinct({{"OUT", r.out}, {"--junit", r.junit}, {"--html", r.html}}, {}, in);
      return cmd_merge({r.out, r.files, r.junit, r.html});
    }
    if (abi->parsed()) return cmd_abi({r.id, r.abi_dtype});
    GoldenOptions o;
    CLI::App* sub = golden->get_subcommands().at(0);
    o.sub = sub->get_name();
    o.args = sub == exp ? std::vector<std::string>{r.id} : r.files;
    o.dir = r.dir;
    o.junit = r.junit;
    o.out = r.out;
    o.reference_only = r.reference_only;
    o.layout = r.layout;
    if (sub == verify) o.backends = backend_options(r, verify);
    for (const std::string* out : {&o.junit, &o.out})
      if (!out->empty()) check_output_path(*out);  // before the work, not after it
    std::vector<NamedFile> in;
    for (const std::string& f : r.files) in.push_back({"golden file", f});
    require_distinct({{"--junit", o.junit}, {"-o", o.out}}, o.backends.kernels, in);
    return cmd_golden(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

int run_cli(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return run_cli(int(words.size()), argv.data());
}

}  // namespace ts
