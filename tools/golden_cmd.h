#pragma once
// touchstone golden regen | verify | export | show: golden tensor files (SPEC "Golden files").
#include "tools/args.h"

namespace ts {
int cmd_golden(Args& args);
}  // namespace ts
