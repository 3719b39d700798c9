#pragma once
// The CLI's subcommands; each returns the process exit code (0 good, 1 failures, 2 usage/set-up,
// 128 + signal when a sweep was interrupted) or throws UsageError.
#include "tools/options.h"

namespace ts {
int cmd_list(const ListOptions& o);
int cmd_check(const CheckOptions& o);
int cmd_repro(const ReproOptions& o);
int cmd_merge(const MergeOptions& o);
int cmd_abi(const AbiOptions& o);
int cmd_bench(const BenchOptions& o);

// The command line: parses argv with the one definition of every command and option (tools/cli.cpp),
// prints usage errors (exit 2) and help (exit 0), and runs the command.
int run_cli(int argc, char** argv);
int run_cli(std::vector<std::string> words);  // words[0] is the program name
}  // namespace ts
