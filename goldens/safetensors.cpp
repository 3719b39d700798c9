#include "goldens/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract.h"

namespace ts {

static_assert(std::endian::native == std::endian::little, "tensor bytes are stored as the host holds them");

namespace {

using json = nlohmann::json;
constexpr std::string_view kMetadata = "__metadata__";

struct Span {
  std::string name;
  uint64_t begin, end;
};

// nlohmann keeps the last of duplicate keys silently; a file whose tensors or metadata another
// reader could resolve differently is rejected instead.
json parse_header(std::string_view text, const std::string& file) {
  check_json_depth(text, cat(file, ": header"));
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto watch = [&](int, json::parse_event_t ev, json& j) {
    if (ev == json::parse_event_t::object_start) open.emplace_back();
    else if (ev == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    else if (ev == json::parse_event_t::key && !open.empty() && !open.back().insert(j.get<std::string>()).second &&
             duplicate.empty())
      duplicate = j.get<std::string>();
    return true;
  };
  json h;
  try {
    h = json::parse(text.begin(), text.end(), watch);
  } catch (const json::exception& e) {
    throw FormatError(cat(file, ": header is not valid JSON: ", e.what()));
  }
  if (!duplicate.empty()) throw FormatError(cat(file, ": header has the key '", duplicate, "' twice"));
  if (!h.is_object()) throw FormatError(cat(file, ": header must be a JSON object, got ", h.type_name()));
  return h;
}

// A JSON integer as uint64, or a FormatError saying which field of which tensor is wrong.
uint64_t as_u64(const json& v, const std::string& file, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return uint64_t(v.get<int64_t>());
  throw FormatError(cat(file, ": ", what, " must be a non-negative integer, got ", v.dump()));
}

Tensor parse_tensor(const std::string& name, const json& e, std::string_view data, const std::string& file,
                    Span& span) {
  const std::string where = cat("tensor '", name, "'");
  if (!e.is_object()) throw FormatError(cat(file, ": ", where, " must be a JSON object, got ", e.dump()));
  for (auto& [k, _] : e.items())
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      throw FormatError(cat(file, ": ", where, " has an unknown field '", k, "'"));
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!e.contains(k)) throw FormatError(cat(file, ": ", where, " has no '", k, "'"));

  const json& dt = e["dtype"];
  std::optional<DType> dtype = dt.is_string() ? dtype_from_safetensors(dt.get<std::string>()) : std::nullopt;
  if (!dtype)
    throw FormatError(cat(file, ": ", where, " has dtype ", dt.dump(),
                          "; supported: F64, F32, F16, BF16, I8, I32"));

  const json& sh = e["shape"];
  if (!sh.is_array()) throw FormatError(cat(file, ": ", where, " shape must be an array, got ", sh.dump()));
  Shape shape;
  // The product of the non-zero dimensions stays below 2^56, so no product of any of them (numel,
  // numel * dtype size, or a reference's S*D) can overflow, even in a tensor with a zero dimension.
  constexpr uint64_t kLimit = uint64_t(1) << 56;
  uint64_t count = 1, bound = 1;
  for (const json& d : sh) {
    uint64_t v = as_u64(d, file, where + " shape dimension");
    if (v > kLimit || (v && bound > kLimit / v)) throw FormatError(cat(file, ": ", where, " shape ", sh.dump(), " is too large"));
    bound *= std::max<uint64_t>(v, 1);
    count *= v;
    shape.push_back(int64_t(v));
  }

  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    throw FormatError(cat(file, ": ", where, " data_offsets must be [begin, end], got ", off.dump()));
  uint64_t begin = as_u64(off[0], file, where + " data_offsets"), end = as_u64(off[1], file, where + " data_offsets");
  if (begin > end || end > data.size())
    throw FormatError(cat(file, ": ", where, " data_offsets [", begin, ", ", end, "] are outside the data area of ",
                          data.size(), " bytes"));
  uint64_t want = count * dtype_size(*dtype);
  if (end - begin != want)
    throw FormatError(cat(file, ": ", where, " holds ", end - begin, " bytes but ", dtype_name(*dtype), shape_str(shape),
                          " needs ", want));
  span = {name, begin, end};
  Tensor t;
  t.dtype = *dtype;
  t.shape = std::move(shape);
  t.bytes.assign(data.begin() + ptrdiff_t(begin), data.begin() + ptrdiff_t(end));
  return t;
}

// Tensors must tile the data area exactly: an overlap would alias two tensors, a gap or a tail
// would hide bytes no tensor accounts for.
void check_tiling(std::vector<Span> spans, uint64_t size, const std::string& file) {
  std::sort(spans.begin(), spans.end(), [](auto& a, auto& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t at = 0;
  const Span* prev = nullptr;
  for (const Span& s : spans) {
    if (s.begin < at)
      throw FormatError(cat(file, ": tensors '", prev->name, "' [", prev->begin, ", ", prev->end, ") and '", s.name,
                            "' [", s.begin, ", ", s.end, ") overlap"));
    if (s.begin > at)
      throw FormatError(cat(file, ": bytes [", at, ", ", s.begin, ") of the data area belong to no tensor"));
    at = s.end;
    prev = &s;
  }
  if (at != size) throw FormatError(cat(file, ": bytes [", at, ", ", size, ") of the data area belong to no tensor"));
}

}  // namespace

void check_json_depth(std::string_view text, const std::string& where) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw FormatError(cat(where, " nests JSON deeper than ", kMaxJsonDepth, " levels (refused: printing or copying ",
                              "such a value would recurse once per level)"));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string_view safetensors_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i8: return "I8";
    case DType::i32: return "I32";
    case DType::f64: return "F64";
  }
  return "?";
}

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::f64})
    if (safetensors_dtype(t) == name) return t;
  return std::nullopt;
}

SafeTensors parse_safetensors(std::string_view bytes, const std::string& file) {
  if (bytes.size() < 8)
    throw FormatError(cat(file, ": truncated: ", bytes.size(), " bytes, less than the 8-byte header length"));
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8)
    throw FormatError(cat(file, ": header length ", n, " exceeds the ", bytes.size() - 8,
                          " bytes that follow it (truncated or not a safetensors file)"));
  json h = parse_header(bytes.substr(8, n), file);
  std::string_view data = bytes.substr(8 + n);

  SafeTensors st;
  std::vector<Span> spans;
  for (auto& [name, e] : h.items()) {
    if (name == kMetadata) {
      if (!e.is_object()) throw FormatError(cat(file, ": __metadata__ must be an object of strings, got ", e.type_name()));
      for (auto& [k, v] : e.items()) {
        if (!v.is_string()) throw FormatError(cat(file, ": __metadata__ value of '", k, "' must be a string, got ", v.dump()));
        st.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (name.empty()) throw FormatError(cat(file, ": a tensor has an empty name"));
    Span span;
    st.tensors[name] = parse_tensor(name, e, data, file, span);
    spans.push_back(span);
  }
  check_tiling(std::move(spans), data.size(), file);
  return st;
}

std::string serialize_safetensors(const SafeTensors& st) {
  json h = json::object();
  if (!st.metadata.empty()) h[std::string(kMetadata)] = st.metadata;
  uint64_t at = 0;
  for (auto& [name, t] : st.tensors) {
    h[name] = {{"dtype", safetensors_dtype(t.dtype)}, {"shape", t.shape}, {"data_offsets", {at, at + t.nbytes()}}};
    at += t.nbytes();
  }
  std::string header = h.dump();  // nlohmann objects are key-sorted maps: a canonical order
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  out += header;
  for (auto& [name, t] : st.tensors) out.append(reinterpret_cast<const char*>(t.bytes.data()), t.nbytes());
  return out;
}

}  // namespace ts
