#include "gpu/plans/registry.h"

#include "core/case_rules.h"

#include <stdexcept>

namespace ts {

// The operators, one line each, in the order reports show them: each is defined by its contract
// (reference/<op>.cpp) and its plan (gpu/plans/<op>.cpp), which joins them in <op>_op().
#define TS_OPERATORS(X) \
  X(rope_llama) \
  X(rope_cis) \
  X(rope_half) \
  X(rope_matrix) \
  X(sdpa) \
  X(q8ta_linear) \
  X(q8ta_add) \
  X(q8ta_conv2d) \
  X(rms_norm) \
  /* one line per operator, each ending in a backslash */

#define TS_DECLARE(op) const OpDef& op##_op();
TS_OPERATORS(TS_DECLARE)
#undef TS_DECLARE

const std::vector<const OpDef*>& all_ops() {
#define TS_LIST(op) &op##_op(),
  static const std::vector<const OpDef*> ops = {TS_OPERATORS(TS_LIST)};
#undef TS_LIST
  return ops;
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef* op : all_ops())
    if (op->name == name) return op;
  return nullptr;
}

const OpDef& named_op(std::string_view name) {
  if (const OpDef* op = find_op(name)) return *op;
  throw std::invalid_argument(cat("no operator named '", name, "'"));
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
