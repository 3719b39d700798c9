#include "reference/common.h"

#include <stdexcept>

namespace ts {

std::map<std::string, std::vector<std::string>> float_layouts(const std::vector<std::string>& tensors) {
  std::map<std::string, std::vector<std::string>> m;
  for (const std::string& t : tensors) m[t] = {"buffer", "texture3d_w", "texture3d_h", "texture3d_c"};
  return m;
}

Tensor uniform_tensor(DType t, Shape s, uint64_t seed, const std::string& name, double lo, double hi) {
  Tensor r(t, std::move(s));
  if (AllocationLimit::shapes_only()) return r;
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

double gamma_f32(double n) {
  const double nu = n * kUnitF32;
  if (!(nu < 1)) throw std::invalid_argument(cat("gamma_f32(", n, "): n u must be below 1"));
  return nu / (1 - nu);
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
