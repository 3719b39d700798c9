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

}  // namespace ts
