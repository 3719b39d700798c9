#include "core/case_rules.h"

#include <algorithm>
#include <charconv>

#include "core/layout.h"

namespace ts {

Var int_var(std::string name, int64_t min, int64_t max, std::string dflt, std::string help) {
  return Var{std::move(name), Var::Kind::integer, min, max, {}, std::move(dflt), std::move(help)};
}
Var word_var(std::string name, std::vector<std::string> words, std::string dflt, std::string help) {
  return Var{std::move(name), Var::Kind::word, 0, 0, std::move(words), std::move(dflt), std::move(help)};
}
Var list_var(std::string name, int64_t min, int64_t max, std::string dflt, std::string help) {
  return Var{std::move(name), Var::Kind::integers, min, max, {}, std::move(dflt), std::move(help)};
}

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool integer(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

void check_value(const OpDef& op, const Var& var, const std::string& value) {
  auto bad = [&](const std::string& why) {
    throw UsageError(cat(op.name, ": variable ", var.name, "=", value, " ", why, " (", var.help, ")"));
  };
  auto in_range = [&](std::string_view part) {
    int64_t v;
    if (!integer(part, v)) bad(cat("is not an integer"));
    if (v < var.min || v > var.max) bad(cat("is out of range [", var.min, ", ", var.max, "]"));
  };
  switch (var.kind) {
    case Var::Kind::integer: in_range(value); break;
    case Var::Kind::word:
      if (std::find(var.words.begin(), var.words.end(), value) == var.words.end())
        bad(cat("is not one of: ", joined(var.words)));
      break;
    case Var::Kind::integers: {
      size_t start = 0;
      for (size_t i = 0; i <= value.size(); ++i)
        if (i == value.size() || value[i] == ':') {
          in_range(std::string_view(value).substr(start, i - start));
          start = i + 1;
        }
      break;
    }
  }
}

std::vector<std::string> tensors_of(const OpDef& op) {
  std::vector<std::string> t = op.inputs;
  for (auto& o : op.outputs)
    if (std::find(t.begin(), t.end(), o) == t.end()) t.push_back(o);
  return t;
}

}  // namespace

void check_case(const OpDef& op, const Case& c) {
  if (std::find(op.dtypes.begin(), op.dtypes.end(), c.dtype) == op.dtypes.end()) {
    std::vector<std::string> names;
    for (DType t : op.dtypes) names.emplace_back(dtype_name(t));
    throw UsageError(cat(op.name, ": dtype ", dtype_name(c.dtype), " is not defined for this operator (dtypes: ",
                         joined(names), ")"));
  }
  for (auto& [key, value] : c.vars) {
    auto var = std::find_if(op.vars.begin(), op.vars.end(), [&](const Var& v) { return v.name == key; });
    if (var != op.vars.end()) {
      check_value(op, *var, value);
      continue;
    }
    // <input>_dtype: an input in another dtype, to write a mixed-dtype (invalid) case.
    const std::string suffix = "_dtype";
    if (key.size() > suffix.size() && key.ends_with(suffix)) {
      std::string input = key.substr(0, key.size() - suffix.size());
      if (std::find(op.inputs.begin(), op.inputs.end(), input) != op.inputs.end()) {
        if (!parse_dtype(value)) throw UsageError(cat(op.name, ": variable ", key, "=", value, " is not a dtype"));
        continue;
      }
    }
    std::vector<std::string> names;
    for (auto& v : op.vars) names.push_back(v.name);
    for (auto& in : op.inputs) names.push_back(in + "_dtype");
    throw UsageError(cat(op.name, ": unknown variable '", key, "' (variables: ", joined(names), ")"));
  }
  for (auto& v : op.vars)
    if (v.dflt.empty() && !c.has(v.name))
      throw UsageError(cat(op.name, ": required variable '", v.name, "' is missing (", v.help, ")"));

  check_storage(op, c.storage);
}

void check_storage(const OpDef& op, std::string_view storage) {
  Storage st = Storage::parse(storage);
  const std::vector<std::string> tensors = tensors_of(op);
  for (auto& [tensor, layout] : st.overrides)
    if (std::find(tensors.begin(), tensors.end(), tensor) == tensors.end())
      throw UsageError(cat(op.name, ": storage override names '", tensor, "', which is not a tensor of this operator (",
                           joined(tensors), ")"));
  for (auto& t : tensors) {
    auto it = op.layouts.find(t);
    const std::vector<std::string> allowed = it == op.layouts.end() ? std::vector<std::string>{"buffer"} : it->second;
    const std::string& layout = st.of(t);
    if (std::find(allowed.begin(), allowed.end(), layout) == allowed.end())
      throw UsageError(cat(op.name, ": tensor ", t, " cannot be stored as ", layout, " (", t, " allows: ",
                           joined(allowed), ")"));
  }
}

namespace {

uint64_t input_bytes(const Problem& p) {
  uint64_t inputs = 0;
  for (auto& [_, t] : p.inputs)
    if (__builtin_add_overflow(inputs, checked_bytes(t.shape, dtype_size(t.dtype)), &inputs))
      throw CaseTooLarge("case size overflows");
  return inputs;
}

void check_size(uint64_t inputs, uint64_t outputs, uint64_t max_bytes) {
  if (inputs > max_bytes || outputs > max_bytes - inputs)
    throw CaseTooLarge(cat("case needs ", inputs, " bytes of inputs and ", outputs,
                           " of reference outputs, more than the limit of ", max_bytes,
                           " (kMaxCaseBytes in core/case_rules.h); refused before anything was built"));
}

}  // namespace

void check_case_size(const OpDef& op, const Case& c, uint64_t max_bytes) {
  Problem p;
  {
    AllocationLimit shapes(max_bytes, AllocationLimit::Mode::shapes_only);  // the inputs, counted as made
    try {
      p = make_problem(op, c);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception&) {
      return;  // building it fails the same way in prepare(), as an ERROR
    }
  }
  // The declared outputs too where the problem is valid with its values read as zeros: op.buffers()
  // is defined for valid problems alone (an invalid one may divide by a zero dimension). A rule on
  // values (a zero scale) leaves the outputs to prepare(), which charges them once the built problem
  // is valid, still before the reference allocates them.
  check_size(input_bytes(p), op.validate(p) ? 0 : declared_output_bytes(op, p), max_bytes);
}

void check_case_size(const OpDef& op, const Problem& p, uint64_t max_bytes) {
  check_size(input_bytes(p), declared_output_bytes(op, p), max_bytes);
}

uint64_t declared_output_bytes(const OpDef& op, const Problem& p) {
  uint64_t total = 0;
  for (const BufferSpec& b : op.buffers(p)) {
    // Scratch lives on the device only: a backend refuses one past its binding limit (UNSUPPORTED)
    // before it makes any host copy.
    if (b.role == BufferSpec::Role::scratch) continue;
    const bool computed = is_float(b.dtype) && b.init_from.empty() && b.role == BufferSpec::Role::output;
    const uint64_t each = computed ? 8 : dtype_size(b.dtype);
    if (__builtin_add_overflow(total, checked_bytes(b.shape, each), &total)) throw CaseTooLarge("case size overflows");
  }
  return total;
}

}  // namespace ts
