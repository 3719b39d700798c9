#pragma once
#include <string_view>
#include <vector>

#include "core/op.h"

namespace ts {
// The one list of operators, in the order reports show them.
const std::vector<const OpDef*>& all_ops();
const OpDef* find_op(std::string_view name);  // nullptr if unknown
}  // namespace ts
