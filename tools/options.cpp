#include "tools/options.h"

#include <algorithm>
#include <limits>

#include "core/case.h"
#include "core/contract.h"

namespace ts {
namespace {

// 10000000 -> "10,000,000": ranges in messages read at a glance.
std::string grouped(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

}  // namespace

uint64_t parse_integer(std::string_view option, std::string_view text, uint64_t lo, uint64_t hi) {
  auto bad = [&] {
    return UsageError(cat(option, " must be an integer in ", grouped(lo), "..", grouped(hi), ", got '", text, "'"));
  };
  if (text.empty() || text.size() > 20) throw bad();
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') throw bad();
    const uint64_t d = uint64_t(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) throw bad();  // past uint64
    v = v * 10 + d;
  }
  if (v < lo || v > hi) throw bad();
  return v;
}

std::pair<uint32_t, uint32_t> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    throw UsageError(cat("--shard must be I/N with 0 <= I < N <= ", kMaxShards, ", got '", text, "'"));
  const uint64_t n = parse_integer("--shard's N", text.substr(slash + 1), 1, kMaxShards);
  const uint64_t i = parse_integer("--shard's I", text.substr(0, slash), 0, n - 1);
  return {uint32_t(i), uint32_t(n)};
}

std::vector<std::string> split_list(std::string_view option, const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    size_t start = 0;
    for (size_t j = 0; j <= v.size(); ++j) {
      if (j < v.size() && v[j] != ',') continue;
      std::string item = v.substr(start, j - start);
      if (item.empty()) throw UsageError(cat(option, " has an empty item in '", v, "'"));
      if (std::find(out.begin(), out.end(), item) != out.end())
        throw UsageError(cat(option, " names '", item, "' twice"));
      out.push_back(std::move(item));
      start = j + 1;
    }
  }
  return out;
}

}  // namespace ts
