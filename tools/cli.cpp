// The command line: the touchstone app, its help and its usage errors. Each command defines its own
// subcommand and options in its own file (add_*_command, tools/commands.h); this wires them, so
// `--help` shows every command from the one definition of each (CLI11).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>

#include "tools/commands.h"
#include "tools/environment.h"
#include "tools/help_examples.h"

namespace ts {
namespace {

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

std::string footer() {
  return "case ids\n  <op>/<k=v,...>/<dtype>/<storage>/seed=<n>, e.g.\n  " + example_case_id() + R"(
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

// "a, b or c"
template <class App>
std::string names_of(const std::vector<App*>& apps, const char* last_sep) {
  std::string s;
  for (size_t i = 0; i < apps.size(); ++i) s += (i == 0 ? "" : i + 1 == apps.size() ? last_sep : ", ") + apps[i]->get_name();
  return s;
}

// Parses argv; the exit code when the line is a usage error (2, with a message) or asked for help (0).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  const auto commands = app.get_subcommands({});
  if (argv[1][0] != '-' && std::none_of(commands.begin(), commands.end(), [&](auto* c) { return c->get_name() == argv[1]; })) {
    std::fprintf(stderr, "error: unknown command '%s' (commands: %s; see touchstone --help)\n", argv[1],
                 names_of(commands, ", ").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string m = usage_message(e), where = "touchstone";
    const CLI::App* a = &app;
    while (!a->get_subcommands().empty()) {
      a = a->get_subcommands().front();
      where += " " + a->get_name();
    }
    // A command made of subcommands (golden) given none of them.
    if (dynamic_cast<const CLI::RequiredError*>(&e) && a != &app && !a->get_subcommands({}).empty()) {
      m = a->get_name() + " needs a subcommand: " + names_of(a->get_subcommands({}), " or ");
      if (!a->remaining().empty()) m += ", got '" + a->remaining().front() + "'";
    }
    std::fprintf(stderr, "error: %s (see %s --help)\n", m.c_str(), where.c_str());
    return 2;
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app(kDescription, "touchstone");
  app.formatter(std::make_shared<Formatter>());
  app.footer(footer());
  app.require_subcommand(1);
  app.get_formatter()->column_width(30);
  const std::vector<Command> commands = {add_list_command(app),  add_check_command(app), add_repro_command(app),
                                         add_bench_command(app), add_merge_command(app), add_abi_command(app),
                                         add_golden_command(app)};
  CLI::App* help = app.add_subcommand("help", "this help");
  // Subcommands copied the plain -h,--help when they were made; `touchstone --help` shows them all.
  app.set_help_flag();
  app.set_help_all_flag("-h,--help", "this help: every command with its options");
  auto print_help = [&app] { std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout); };
  if (argc < 2) return print_help(), 2;
  if (const std::optional<int> rc = parse(app, argc, argv)) return *rc;

  // A file-size limit (ulimit -f) then fails a write with EFBIG, reported like a full disk, instead
  // of killing the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    check_environment();
    if (help->parsed()) return print_help(), 0;
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
    return 2;  // require_subcommand(1): not reached
  } catch (const std::exception& e) {  // UsageError and the rest alike
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
