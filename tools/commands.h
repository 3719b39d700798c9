#pragma once
// The CLI's subcommands; each returns the process exit code (0 good, 1 failures, 2 usage/set-up,
// 128 + signal when a sweep was interrupted) or throws UsageError. Each command's file also adds
// its subcommand, options and help to the command line (add_*_command); tools/cli.cpp wires them.
#include <functional>
#include <string>
#include <vector>

#include "tools/options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace ts {
int cmd_list(const ListOptions& o);
int cmd_check(const CheckOptions& o);
int cmd_repro(const ReproOptions& o);
int cmd_merge(const MergeOptions& o);
int cmd_abi(const AbiOptions& o);
int cmd_bench(const BenchOptions& o);

// A command as the command line knows it: its subcommand of the touchstone app, and what runs it
// once the line parsed (its options converted then: a bad value is a UsageError before any work).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
Command add_list_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_repro_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_abi_command(CLI::App& app);
Command add_golden_command(CLI::App& app);  // tools/golden_cmd.cpp

// The command line: parses argv with every command's definition, prints usage errors (exit 2) and
// help (exit 0), and runs the command.
int run_cli(int argc, char** argv);
int run_cli(std::vector<std::string> words);  // words[0] is the program name
}  // namespace ts
