#pragma once
// Every operator definition (one file each in reference/) and its generators (properties/).
#include "core/op.h"

namespace ts {

const OpDef& rope_llama_op();
const OpDef& rope_cis_op();
const OpDef& rope_half_op();
const OpDef& rope_matrix_op();
const OpDef& sdpa_op();
const OpDef& q8ta_linear_op();
const OpDef& q8ta_add_op();
const OpDef& q8ta_conv2d_op();

rc::Gen<Case> gen_rope_llama(DType, bool valid);
rc::Gen<Case> gen_rope_cis(DType, bool valid);
rc::Gen<Case> gen_rope_half(DType, bool valid);
rc::Gen<Case> gen_rope_matrix(DType, bool valid);
rc::Gen<Case> gen_sdpa(DType, bool valid);
rc::Gen<Case> gen_q8ta_linear(DType, bool valid);
rc::Gen<Case> gen_q8ta_add(DType, bool valid);
rc::Gen<Case> gen_q8ta_conv2d(DType, bool valid);

}  // namespace ts
