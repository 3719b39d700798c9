#pragma once
// The deterministic case list of one operator x dtype: the hand-picked edge cases first, then
// cases drawn from the operator's RapidCheck generators (the same ones the properties use), about
// one in five of them invalid. Case k of the list depends only on (seed, op, dtype, k).
#include <cstdint>
#include <vector>

#include "core/op.h"

namespace ts {

std::vector<Case> sweep_cases(const OpDef& op, DType dtype, int count, uint64_t seed);

// Draws one case from a generator with a RapidCheck random state derived from `key`.
Case draw_case(const OpDef& op, DType dtype, bool valid, uint64_t key, int size);

}  // namespace ts
