#include "tools/xfail.h"

#include <algorithm>

#include "core/contract.h"
#include "core/runner.h"
#include "goldens/files.h"
#include "gpu/plans/registry.h"
#include "tools/backends.h"

namespace ts {
namespace {

std::string_view trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

bool known_op(std::string_view n) { return find_op(std::string(n)) != nullptr; }
bool known_backend(std::string_view n) {
  const auto& k = known_backends();
  return std::find(k.begin(), k.end(), n) != k.end();
}

}  // namespace

XfailList XfailList::load(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw UsageError(cat("--xfail: ", e.what()));
  }
  return parse(text, path);
}

XfailList XfailList::parse(std::string_view text, const std::string& source) {
  XfailList list;
  std::unordered_map<std::string, size_t> seen;  // entry and backend -> its index
  size_t line_no = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    XfailEntry e;
    e.where = cat(source, ":", line_no);
    const size_t hash = line.find('#');
    const std::string_view body = trim(line.substr(0, hash));
    if (hash == std::string_view::npos || trim(line.substr(hash + 1)).empty())
      throw UsageError(cat(e.where, ": '", body, "' has no reason: write `<entry>  # why it is expected to fail`"));
    e.reason = std::string(trim(line.substr(hash + 1)));
    const size_t blank = body.find_first_of(" \t");
    const std::string_view what = body.substr(0, blank);
    const std::string_view rest = blank == std::string_view::npos ? std::string_view() : trim(body.substr(blank));
    auto bad = [&](const std::string& why) { return UsageError(cat(e.where, ": ", why)); };
    if (std::count(what.begin(), what.end(), '/') == 2) {
      const size_t a = what.find('/'), b = what.find('/', a + 1);
      e.op = what.substr(0, a), e.backend_part = what.substr(a + 1, b - a - 1), e.dtype = what.substr(b + 1);
      if (!rest.empty()) throw bad(cat("unexpected '", rest, "' after the pattern ", what, " (op/backend/dtype  # reason)"));
      if (e.op != "*" && !known_op(e.op)) throw bad(cat("unknown operator '", e.op, "' (see touchstone list; or *)"));
      if (e.backend_part != "*" && !known_backend(e.backend_part))
        throw bad(cat("unknown backend '", e.backend_part, "' (vulkan, webgpu or *)"));
      if (e.dtype != "*" && !parse_dtype(e.dtype)) throw bad(cat("unknown dtype '", e.dtype, "' (float32, float16, bfloat16 or *)"));
      e.entry = std::string(what);
    } else {
      try {
        e.entry = parse_case(what).id();
      } catch (const UsageError& ex) {
        throw bad(cat("not a case id or an op/backend/dtype pattern: ", ex.what()));
      }
      e.is_case = true;
      e.backend = std::string(rest);
      if (!e.backend.empty() && !known_backend(e.backend))
        throw bad(cat("unknown backend '", e.backend, "' after the case id (vulkan or webgpu; none: every backend)"));
    }
    // A set, not a scan of the entries so far: a list of 150,000 ids took minutes to check.
    const auto [first, added] = seen.emplace(cat(e.entry, '\n', e.backend), list.entries_.size());
    if (!added) throw bad(cat("'", body, "' is listed already at ", list.entries_[first->second].where));
    if (e.is_case) list.by_id_.emplace(e.entry, list.entries_.size());
    list.entries_.push_back(std::move(e));
    if (end == text.size()) break;
  }
  return list;
}

void XfailList::require_reachable(const std::vector<std::array<std::string, 3>>& groups) const {
  auto fits = [](const std::string& part, std::string_view v) { return part == "*" || part == v; };
  std::string names;
  for (auto& [op, backend, dtype] : groups) names += cat(names.empty() ? "" : ", ", op, "/", backend, "/", dtype);
  for (const XfailEntry& e : entries_)
    if (!e.is_case && std::none_of(groups.begin(), groups.end(), [&](auto& g) {
          return fits(e.op, g[0]) && fits(e.backend_part, g[1]) && fits(e.dtype, g[2]);
        }))
      throw UsageError(cat(e.where, ": the pattern ", e.entry, " matches no group of this run, so it can never mark a case (",
                           groups.size() > 12 ? cat(groups.size(), " groups") : cat("groups: ", names),
                           "); remove it or run what it names"));
}

const XfailEntry* XfailList::pattern_for(std::string_view op, std::string_view backend, std::string_view dtype) const {
  auto fits = [](const std::string& part, std::string_view v) { return part == "*" || part == v; };
  for (const XfailEntry& e : entries_)
    if (!e.is_case && fits(e.op, op) && fits(e.backend_part, backend) && fits(e.dtype, dtype)) return &e;
  return nullptr;
}

const XfailEntry* XfailList::case_entry(const std::string& id, std::string_view backend) const {
  auto [a, b] = by_id_.equal_range(id);
  for (auto it = a; it != b; ++it) {
    const XfailEntry& e = entries_[it->second];
    if (e.backend.empty() || e.backend == backend) return &e;
  }
  return nullptr;
}

Mark mark_of(Outcome o, const XfailEntry* e) {
  if (!e || o == Outcome::unsupported) return Mark::none;
  if (is_failure(o)) return Mark::xfail;
  return e->is_case ? Mark::xpass : Mark::none;  // a pattern's staleness is its group's (Tally::pattern_stale)
}

}  // namespace ts
