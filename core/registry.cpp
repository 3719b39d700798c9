#include "core/registry.h"

#include "reference/ops.h"

namespace ts {

const std::vector<const OpDef*>& all_ops() {
  static const std::vector<const OpDef*> ops = {
      &rope_llama_op(),
      &rope_cis_op(),
      &rope_half_op(),
      &rope_matrix_op(),
      &sdpa_op(),
      &q8ta_linear_op(),
      &q8ta_add_op(),
      &q8ta_conv2d_op(),
  };
  return ops;
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef* op : all_ops())
    if (op->name == name) return op;
  return nullptr;
}

}  // namespace ts
