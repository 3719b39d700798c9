#pragma once
// The CLI's subcommands; each returns the process exit code (0 good, 1 failures, 2 usage/set-up).
#include "tools/args.h"

namespace ts {
int cmd_list(Args& args);
int cmd_check(Args& args);
int cmd_repro(Args& args);
extern const char* const kHelp;
}  // namespace ts
