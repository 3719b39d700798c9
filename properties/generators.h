#pragma once
// Every operator's generator (RapidCheck: random valid / invalid cases). The operator is an
// argument, not looked up: generators sit below reference/, whose OpDefs name them, and read only
// the operator's declaration (its layouts). The Gen keeps a pointer to it: operators are static.
#include "core/op.h"

namespace ts {

rc::Gen<Case> gen_rope_llama(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_cis(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_half(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_matrix(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_sdpa(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_linear(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_add(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_conv2d(const OpDef& op, DType, bool valid);

}  // namespace ts
