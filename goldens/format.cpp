#include "goldens/format.h"

#include <charconv>
#include <cmath>

#include "goldens/files.h"
#include "goldens/json_read.h"

namespace ts {
namespace {

using json = nlohmann::json;
constexpr std::string_view kExpected = "expected.", kAux = "aux.";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string take(std::map<std::string, std::string>& m, const std::string& key, const std::string& file) {
  auto it = m.find(key);
  if (it == m.end())
    throw FormatError(cat(file, ": metadata has no '", key, "' (", kGoldenFormat,
                          " needs format, op, dtype, params, expect, source)"));
  std::string v = std::move(it->second);
  m.erase(it);
  return v;
}

std::optional<std::string> take_optional(std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  std::string v = std::move(it->second);
  m.erase(it);
  return v;
}

json parse_json(const std::string& text, const std::string& file, const std::string& key) {
  return parse_json_within_limits(text, cat(file, ": metadata '", key, "'"));
}

Tolerance parse_tolerance(const std::string& text, const std::string& file) {
  json t = parse_json(text, file, "tolerance");
  auto bad = [&] {
    return FormatError(cat(file, ": metadata 'tolerance' must be {\"atol\": a, \"rtol\": r} with finite a, r >= 0, got ",
                           text));
  };
  if (!t.is_object() || t.size() != 2 || !t.contains("atol") || !t.contains("rtol")) throw bad();
  Tolerance tol;
  for (auto [key, dst] : {std::pair{"atol", &tol.atol}, std::pair{"rtol", &tol.rtol}}) {
    if (!t[key].is_number()) throw bad();
    *dst = t[key].get<double>();
    if (!std::isfinite(*dst) || *dst < 0) throw bad();
  }
  return tol;
}

void check_meta(Golden& g, std::map<std::string, std::string> m, const std::string& file) {
  if (m.empty()) throw FormatError(cat(file, ": no __metadata__: not a ", kGoldenFormat, " file"));
  std::string format = take(m, "format", file);
  if (format != kGoldenFormat) throw FormatError(cat(file, ": format is '", format, "', expected '", kGoldenFormat, "'"));
  g.op = take(m, "op", file);
  if (g.op.empty()) throw FormatError(cat(file, ": metadata 'op' is empty"));
  std::string dtype = take(m, "dtype", file);
  auto t = parse_dtype(dtype);
  if (!t) throw FormatError(cat(file, ": metadata 'dtype' is '", dtype, "', not float32, float16, bfloat16, int8, int32 or float64"));
  g.dtype = *t;
  g.params = parse_json(take(m, "params", file), file, "params");
  if (!g.params.is_object()) throw FormatError(cat(file, ": metadata 'params' must be a JSON object, got ", g.params.dump()));
  std::string expect = take(m, "expect", file);
  if (expect != "pass" && expect != "reject")
    throw FormatError(cat(file, ": metadata 'expect' is '", expect, "', must be pass or reject"));
  g.reject = expect == "reject";
  g.source = take(m, "source", file);

  if (auto id = take_optional(m, "case")) {
    Case c;
    try {
      c = Case::parse(*id);
    } catch (const UsageError& e) {
      throw FormatError(cat(file, ": metadata 'case' is not a case id: ", e.what()));
    }
    if (c.op != g.op || c.dtype != g.dtype)
      throw FormatError(cat(file, ": metadata 'case' (", *id, ") disagrees with op '", g.op, "' / dtype '",
                            dtype_name(g.dtype), "'"));
    g.case_id = std::move(id);
  }
  if (auto s = take_optional(m, "seed")) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    if (s->empty() || ec != std::errc() || end != s->data() + s->size())
      throw FormatError(cat(file, ": metadata 'seed' is '", *s, "', not a non-negative decimal integer"));
    g.seed = v;
  }
  if (auto tol = take_optional(m, "tolerance")) g.tolerance = parse_tolerance(*tol, file);
  g.extra = std::move(m);
}

}  // namespace

Golden parse_golden(std::string_view bytes, const std::string& file) {
  SafeTensors st = parse_safetensors(bytes, file);
  Golden g;
  check_meta(g, std::move(st.metadata), file);
  for (auto& [name, t] : st.tensors) {
    if (starts_with(name, kAux)) {
      g.aux[name] = std::move(t);
    } else if (starts_with(name, kExpected)) {
      std::string out = name.substr(kExpected.size());
      if (out.empty()) throw FormatError(cat(file, ": tensor '", name, "' names no output"));
      if (g.reject)
        throw FormatError(cat(file, ": expect is reject but the file holds expected output '", name,
                              "' (a rejected case has no outputs)"));
      g.expected[out] = std::move(t);
    } else {
      g.inputs[name] = std::move(t);
    }
  }
  if (!g.reject && g.expected.empty())
    throw FormatError(cat(file, ": expect is pass but the file holds no expected.<output> tensor"));
  return g;
}

Golden read_golden(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file(path, kMaxReadBytes);
  } catch (const std::runtime_error& e) {
    throw FormatError(e.what());
  }
  return parse_golden(bytes, path);
}

std::string serialize_golden(const Golden& g) {
  SafeTensors st;
  st.metadata = g.extra;
  st.metadata["format"] = kGoldenFormat;
  st.metadata["op"] = g.op;
  st.metadata["dtype"] = dtype_name(g.dtype);
  st.metadata["params"] = g.params.dump();
  st.metadata["expect"] = g.reject ? "reject" : "pass";
  st.metadata["source"] = g.source;
  if (g.case_id) st.metadata["case"] = *g.case_id;
  if (g.seed) st.metadata["seed"] = std::to_string(*g.seed);
  if (g.tolerance) st.metadata["tolerance"] = json{{"atol", g.tolerance->atol}, {"rtol", g.tolerance->rtol}}.dump();
  st.tensors = g.inputs;
  for (auto& [name, t] : g.expected) st.tensors[std::string(kExpected) + name] = t;
  for (auto& [name, t] : g.aux) st.tensors[name] = t;
  return serialize_safetensors(st);
}

void write_golden(const std::string& path, const Golden& g) { write_file_atomic(path, serialize_golden(g)); }

}  // namespace ts
