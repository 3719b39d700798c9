#pragma once
// The shape classes a sweep hit, so a sweep that misses one (no decode case, no MQA, a rule never
// broken) shows it. Classes come from the case's own vars and the reference's verdict.
#include <map>
#include <string>
#include <vector>

#include "core/runner.h"

namespace ts {

// of_plans false: the classes of the case alone (its variables, values and storage), not of the
// kernels its plan runs: what `golden regen` picks goldens by, so that a plan changes no golden.
std::vector<std::string> case_classes(const Expected& e, bool of_plans = true);

// Whether a class describes the case's storage (a layout, mixed layouts, a texture's packed
// dimension) rather than its values: the golden set, which holds logical tensors, is not chosen by
// these (`golden verify --layout` runs goldens through any storage).
bool is_storage_class(const std::string& cls);

// The classes an operator's sweep is expected to reach: every rule and the generic shape classes
// its vars allow; reported as 0 when missed.
std::vector<std::string> expected_classes(const OpDef& op);

}  // namespace ts
