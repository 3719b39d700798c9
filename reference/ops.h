#pragma once
// Every operator definition (one file each in reference/); each names its generator (properties/).
#include "core/op.h"
#include "properties/generators.h"

namespace ts {

const OpDef& rope_llama_op();
const OpDef& rope_cis_op();
const OpDef& rope_half_op();
const OpDef& rope_matrix_op();
const OpDef& sdpa_op();
const OpDef& q8ta_linear_op();
const OpDef& q8ta_add_op();
const OpDef& q8ta_conv2d_op();

// sdpa's per-element bound on `out` (float64, out's shape) for attention computed with every
// operation rounded to `unit_roundoff` (reference/sdpa.cpp derives it): a kernel of another
// precision, e.g. a foreign one accumulating in float16, states its bound with it.
Tensor sdpa_error_bound(const Problem& p, double unit_roundoff);

}  // namespace ts
