#pragma once
// What the operators' generators draw, against what the committed goldens hold: a golden case with
// a value or a shape class that no drawn case of the default sweep has is a shape the sweep meets
// only as that one hand-picked case (a bug there can pass every drawn case). `golden regen`
// reports them; the generators are widened until there are none.
#include <string>
#include <vector>

#include "core/case.h"

namespace ts {

// For each valid case in `goldens`: "<id>: <what the drawn cases never have>", one line per case
// that has something (its variables' values outside the drawn ranges or word sets, shape classes
// never drawn). Storage classes are left out: goldens hold logical tensors.
std::vector<std::string> beyond_generators(const std::vector<Case>& goldens);

}  // namespace ts
