#pragma once
#include "core/op.h"

namespace ts {

// sdpa's per-element bound on `out` (float64, out's shape) for attention computed with every
// operation rounded to `unit_roundoff` (gpu/plans/sdpa.cpp derives it): a kernel of another
// precision, e.g. a foreign one accumulating in float16, states its bound with it.
Tensor sdpa_error_bound(const Problem& p, double unit_roundoff);

}  // namespace ts
