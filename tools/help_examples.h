#pragma once
// Examples in help texts, taken from the operator registry when the command line is built: the help
// shows ids and kernels that exist today, and names no operator of its own.
#include <string>

namespace ts {

// The id of the first valid hand-picked edge case of the first operator, in its first dtype.
std::string example_case_id();
// A --match example: an anchored pattern over that case's operator and one of its variables.
std::string example_match();
// A few built-in kernel stems (Dispatch::kernel), comma-separated: that case's first kernel, then
// the first ones of other operators' examples that are not named after their operator.
std::string example_kernels();

}  // namespace ts
