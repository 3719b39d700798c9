#include "reference/common.h"

namespace ts {

Tensor uniform_tensor(DType t, Shape s, uint64_t seed, const std::string& name, double lo, double hi) {
  Tensor r(t, std::move(s));
  Stream st(seed, name);
  for (int64_t i = 0; i < r.numel(); ++i) r.set(i, st.uniform(uint64_t(i), lo, hi));
  return r;
}

Var pos_var() { return int_var("pos", 0, kMaxPos, "0", "first position of the rotation angles"); }
Var tables_var() {
  return word_var("tables", {"rope", "random"}, "rope",
                  "rope: the conventional cos/sin of position x frequency; random: arbitrary values in [-1, 1]");
}
bool random_tables(const Case& c) { return c.word("tables", "rope") == "random"; }

Tolerance elementwise_tolerance(DType t) {
  switch (t) {
    case DType::f16: return {1e-5, 1e-3};
    case DType::bf16: return {1e-5, 1.6e-2};
    case DType::f64: return {1e-12, 1e-12};
    default: return {1e-5, 1.3e-6};
  }
}

void require_rank(Contract& c, const Problem& p, const std::string& name, size_t rank) {
  const Shape& s = p.inputs.at(name).shape;
  c.require(s.size() == rank, "input_rank", name, " must have rank ", rank, ", got ", shape_str(s));
}

void require_same_dtype(Contract& c, const Problem& p) {
  for (auto& [name, t] : p.inputs)
    c.require(t.dtype == p.dtype, "dtypes_equal", name, " is ", dtype_name(t.dtype), " but the case dtype is ",
              dtype_name(p.dtype));
}

bool has_inputs(Contract& c, const Problem& p, const std::vector<std::string>& names) {
  for (auto& n : names) c.require(p.inputs.count(n) > 0, "inputs_present", "input '", n, "' is missing");
  return !c.failed();
}

DType input_dtype(const Case& c, const std::string& name) {
  std::string w = c.word(name + "_dtype", "");
  if (w.empty()) return c.dtype;
  auto t = parse_dtype(w);
  if (!t) throw UsageError(cat("case ", c.id(), ": unknown dtype '", w, "' for ", name));
  return *t;
}

}  // namespace ts
