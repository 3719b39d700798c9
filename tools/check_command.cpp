// touchstone check: the command line of the sweep, and what is checked before anything opens (the
// sweep itself: tools/check.cpp).
#include <CLI/CLI.hpp>

#include <array>
#include <cstdio>
#include <memory>

#include "core/contract.h"
#include "goldens/files.h"
#include "tools/backends.h"
#include "tools/check_run.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/device_profile.h"
#include "tools/help_examples.h"
#include "tools/shell_quote.h"
#include "tools/xfail.h"

namespace ts {
namespace {

// A --match that selects no case of the sweep (all shards together: one shard of a narrow filter
// may rightly get none) is a usage error. Stops at the first match, so only a filter that selects
// nothing draws the whole sweep before the run.
void require_a_match(const CheckOptions& o, const SweepPlan& plan, const Match& match) {
  if (!match) return;
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      Sweep sweep(*op, t, o.cases, o.seed);
      for (int64_t k = 0; k < sweep.size(); ++k)
        if (match->search(sweep.at(k).id())) return;
    }
  throw UsageError(cat("--match ", shell_quote(o.match), " selects no case of the sweep (", plan.size(),
                       " operators, ", o.cases, " cases per dtype): nothing would run"));
}

// check --list: the ids the sweep would run, one a line; nothing opens, nothing runs.
int list_cases(const CheckOptions& o, const SweepPlan& plan) {
  for_each_case(o, plan, [](uint64_t, const OpDef&, DType, const std::string& id) { std::printf("%s\n", id.c_str()); });
  return std::fflush(stdout) == 0 ? 0 : 2;
}

}  // namespace

int cmd_check(const CheckOptions& o) {
  const SweepPlan plan = sweep_plan(o);
  const auto match = match_regex(o.match);
  require_a_match(o, plan, match);
  if (o.list) {
    for (auto [name, file] : {std::pair{"--junit", &o.junit}, {"--json", &o.json}, {"--html", &o.html}})
      if (!file->empty()) throw UsageError(cat("--list runs nothing, so ", name, " would have nothing to report"));
    return list_cases(o, plan);
  }
  backend_names(o.backends);
  if (!o.xfail.empty()) {  // its usage errors before anything opens
    std::vector<std::array<std::string, 3>> groups;
    for (auto& [op, dtypes] : plan)
      for (DType t : dtypes)
        for (const std::string& b : backend_names(o.backends)) groups.push_back({op->name, b, std::string(dtype_name(t))});
    XfailList::load(o.xfail).require_reachable(groups);
  }
  if (!o.expect.empty()) DeviceProfile::load(o.expect);
  for (const std::string* out : {&o.junit, &o.json, &o.html})
    if (!out->empty()) check_output_path(*out);  // before minutes of sweeping, not after
  // The large cases' references are computed while the backends open (both take about a second).
  auto started = start_check(o);
  std::vector<BackendSlot> slots = open_backends(o.backends);
  if (int rc = report_backends(slots, " (see touchstone list)")) return rc;
  print_kernels(o.backends.kernels);
  return run_check(o, slots, started.get());
}

Command add_check_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> op, dtype;
    std::string cases, seed, shard, junit, json, html, xfail, expect, match;
    bool list = false, fail_fast = false, quiet = false;
    BackendArgs backends;
  };
  auto a = std::make_shared<Args>();
  CLI::App* check = app.add_subcommand(
      "check", wrap("sweep operators x backends x dtypes and compare every backend with the reference; prints a "
                    "table, the coverage of shape classes and, per failing op/backend/dtype, its smallest failing "
                    "case (shrunk with the generators) as a repro line and a count of the rest. Cases are "
                    "made as they run: memory does not grow with --cases. Ctrl-C (SIGINT) or SIGTERM stops "
                    "after the current case, writes the partial report marked interrupted and exits 130 / 143"));
  list_option(check, "--op", a->op, "NAME[,NAME...]", "operators (default: all; see `touchstone list`)");
  list_option(check, "--dtype", a->dtype, "T[,T...]",
              "float32, float16, bfloat16 (default: every dtype the operator defines). A dtype a named --op does "
              "not define is a usage error; without --op, operators that do not define it are left out. A "
              "backend without kernels for a dtype reports UNSUPPORTED");
  single_option(check, "--cases", a->cases, "N",
                "cases per operator x dtype, 1..10,000,000 (default 200): the hand-picked edge cases first (valid "
                "and invalid), then cases drawn from the operator's generators, one in five invalid");
  single_option(check, "--seed", a->seed, "S",
                "seed of the drawn cases, 0..18446744073709551615 (default 1); the same seed gives the same cases");
  single_option(check, "--shard", a->shard, "I/N",
                "run only cases with index % N == I, 0 <= I < N <= 1,000,000 (no overlap, no gap across shards; "
                "`touchstone merge` joins the shards' --json)");
  single_option(check, "--junit", a->junit, "FILE",
                "write JUnit XML (one testsuite per op/backend/dtype). Checked before the sweep starts; replaced "
                "at once by a report saying the run has not finished, so an earlier report never looks current");
  single_option(check, "--json", a->json, "FILE",
                "write the JSON report (schema touchstone-report/1, tools/REPORT_SCHEMA.md): every case with its "
                "outcome, rule, errors per output (max abs, max rel, NMSE, max ULP, worst/tol, mismatches, "
                "unwritten) and seconds; coverage, devices, totals. Checked before the sweep, replaced at once by "
                "a placeholder (state \"running\"), written whole at the end")
      ->group("Reports");
  single_option(check, "--html", a->html, "FILE",
                "write one self-contained HTML page: the table, coverage and, per failing case (each group's "
                "smallest, then its first few), a heatmap of |error|/tolerance over the output's last two "
                "dimensions (the others reduced by max), the mismatches per dimension and the repro line")
      ->group("Reports");
  single_option(check, "--xfail", a->xfail, "FILE",
                "known failures: lines `<case id> [backend]  # reason` or `op/backend/dtype  # reason` (parts may "
                "be *). A listed case that fails is XFAIL and does not fail the run; one that passes is XPASS and "
                "fails it, as does a listed group that ran without a failure. A line without a reason is a usage "
                "error")
      ->group("Reports");
  single_option(check, "--expect", a->expect, "PROFILE",
                "a device profile: the capabilities each backend must have (ci/profiles/NAME.json, built in: "
                "lavapipe, nvidia; or a path). A backend lacking one is an error when it opens (exit 2); a case "
                "UNSUPPORTED for a capability the profile requires is UNEXPECTED_UNSUPPORTED and fails the run "
                "(exit 1)");
  single_option(check, "--match", a->match, "REGEX",
                "run only the cases whose id contains a match of REGEX (ECMAScript syntax without back-references "
                "or look-arounds, matched without backtracking; at most 1,000 characters, 32 nested groups, {m,n} "
                "up to 100), e.g. 'D=(2|6),' or " + example_match() + ". One that selects no case is a usage error")
      ->group("Selection");
  flag_option(check, "--list", a->list,
              "print the case ids the sweep would run (after --shard and --match), one a line; run nothing, open "
              "no backend")
      ->group("Selection");
  flag_option(check, "--fail-fast", a->fail_fast,
              "stop after the first FAIL, ERROR, UNEXPECTED_REJECT, MISSED_REJECT, XPASS or UNEXPECTED_UNSUPPORTED; "
              "the summary and the reports say the run stopped (state \"stopped\"), exit 1")
      ->group("Selection");
  flag_option(check, "--quiet", a->quiet,
              "no progress on stderr (on a terminal, a live line: cases done, rate, ETA, failures)");
  add_backend_options(check, a->backends);
  return {check, [check, a] {
            CheckOptions o;
            o.ops = split_list("--op", a->op);
            o.dtypes = split_list("--dtype", a->dtype);
            if (!a->cases.empty()) o.cases = int64_t(parse_integer("--cases", a->cases, 1, kMaxCases));
            if (!a->seed.empty()) o.seed = parse_integer("--seed", a->seed, 0, UINT64_MAX);
            if (!a->shard.empty()) std::tie(o.shard, o.shards) = parse_shard(a->shard);
            o.junit = a->junit, o.json = a->json, o.html = a->html;
            o.xfail = a->xfail, o.expect = a->expect, o.match = a->match;
            o.list = a->list, o.fail_fast = a->fail_fast, o.quiet = a->quiet;
            o.backends = backend_options(a->backends, check);
            require_distinct({{"--junit", o.junit}, {"--json", o.json}, {"--html", o.html}}, o.backends.kernels,
                             o.xfail.empty() ? std::vector<NamedFile>{} : std::vector<NamedFile>{{"--xfail", o.xfail}});
            return cmd_check(o);
          }};
}

}  // namespace ts
