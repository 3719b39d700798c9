#include "reference/registry.h"

#include "core/case_rules.h"
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

namespace {

const OpDef& known_op(const Case& c) {
  const OpDef* op = find_op(c.op);
  if (!op) {
    std::string names;
    for (const OpDef* o : all_ops()) names += (names.empty() ? "" : ", ") + o->name;
    throw UsageError(cat("unknown operator '", c.op, "' (operators: ", names, ")"));
  }
  return *op;
}

}  // namespace

Case parse_case(std::string_view id) {
  Case c = Case::parse(id);
  check_case(known_op(c), c);
  return c;
}

Expected prepare(const Case& c, uint64_t max_bytes) { return prepare(known_op(c), c, max_bytes); }

}  // namespace ts
