#pragma once
// touchstone golden regen | verify | export | show: golden tensor files (SPEC "Golden files").
#include "tools/options.h"

namespace ts {
int cmd_golden(const GoldenOptions& o);
}  // namespace ts
