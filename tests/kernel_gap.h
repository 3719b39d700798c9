#pragma once
// Operators whose GPU kernels are not written yet (q8ta_linear, q8ta_add: issue 11's kernel
// session) plan no dispatch, and the GPU backends report their valid cases as UNSUPPORTED. Suites
// that require PASS of valid cases require UNSUPPORTED of those instead — a stated gap, never a
// pass — and require PASS again by themselves as soon as the operator's plan dispatches a kernel.
#include "core/op.h"

namespace ts::test {

inline bool has_kernel(const OpDef& op, const Problem& p) { return !op.plan(p).empty(); }

}  // namespace ts::test
