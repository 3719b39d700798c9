#include "core/case.h"

#include <charconv>

#include "core/contract.h"
#include "core/layout.h"

namespace ts {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool to_i64(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool plain_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' || c == '.' || c == '+'))
      return false;
  return true;
}

}  // namespace

std::string Case::id() const {
  std::string v;
  for (auto& [k, val] : vars) v += (v.empty() ? "" : ",") + k + "=" + val;
  return cat(op, "/", v, "/", dtype_name(dtype), "/", storage, "/seed=", seed);
}

Case Case::parse(std::string_view id) {
  const std::string form = "<op>/<k=v,...>/<dtype>/<storage>/seed=<n>";
  auto parts = split(id, '/');
  if (parts.size() != 5)
    throw UsageError(cat("case id '", id, "' must have 5 parts separated by '/': ", form));
  Case c;
  c.op = std::string(parts[0]);
  if (!plain_word(c.op)) throw UsageError(cat("case id '", id, "': bad operator name '", parts[0], "'"));
  if (!parts[1].empty())
    for (auto kv : split(parts[1], ',')) {
      auto eq = kv.find('=');
      if (eq == std::string_view::npos || !plain_word(kv.substr(0, eq)) || !plain_word(kv.substr(eq + 1)))
        throw UsageError(cat("case id '", id, "': variable '", kv, "' is not key=value"));
      if (c.has(kv.substr(0, eq))) throw UsageError(cat("case id '", id, "': variable '", kv.substr(0, eq), "' given twice"));
      c.vars.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
  auto dt = parse_dtype(parts[2]);
  if (!dt) throw UsageError(cat("case id '", id, "': unknown dtype '", parts[2], "'"));
  c.dtype = *dt;
  c.storage = std::string(parts[3]);
  try {
    Storage::parse(c.storage);
  } catch (const UsageError& e) {
    throw UsageError(cat("case id '", id, "': ", e.what()));
  }
  int64_t seed;
  if (parts[4].substr(0, 5) != "seed=" || !to_i64(parts[4].substr(5), seed) || seed < 0)
    throw UsageError(cat("case id '", id, "': last part must be seed=<non-negative integer>"));
  c.seed = uint64_t(seed);
  return c;
}

const std::string* Case::find(std::string_view key) const {
  for (auto& [k, v] : vars)
    if (k == key) return &v;
  return nullptr;
}

bool Case::has(std::string_view key) const { return find(key) != nullptr; }

int64_t Case::get(std::string_view key) const {
  const std::string* v = find(key);
  if (!v) throw UsageError(cat("case ", id(), ": missing variable '", key, "'"));
  int64_t r;
  if (!to_i64(*v, r)) throw UsageError(cat("case ", id(), ": variable '", key, "' must be an integer, got '", *v, "'"));
  return r;
}

int64_t Case::get(std::string_view key, int64_t dflt) const { return has(key) ? get(key) : dflt; }

std::string Case::word(std::string_view key, std::string dflt) const {
  const std::string* v = find(key);
  return v ? *v : dflt;
}

std::vector<int64_t> Case::list(std::string_view key) const {
  std::vector<int64_t> out;
  const std::string* v = find(key);
  if (!v) return out;
  for (auto part : split(*v, ':')) {
    int64_t x;
    if (!to_i64(part, x)) throw UsageError(cat("case ", id(), ": '", key, "' must be integers joined by ':'"));
    out.push_back(x);
  }
  return out;
}

Case& Case::set(std::string key, std::string v) {
  for (auto& [k, val] : vars)
    if (k == key) {
      val = std::move(v);
      return *this;
    }
  vars.emplace_back(std::move(key), std::move(v));
  return *this;
}

Case& Case::set(std::string key, int64_t v) { return set(std::move(key), std::to_string(v)); }

}  // namespace ts
