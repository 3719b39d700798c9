#include "tools/merge_sweep.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "core/contract.h"
#include "gpu/plans/registry.h"
#include "tools/report_json.h"

namespace ts {
namespace {

using nlohmann::json;

std::string shard_str(uint32_t i, uint32_t n) { return cat(i, "/", n); }

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Why `c` is not a case merge can read ("" when it is).
std::string malformed(const json& c) {
  if (!c.is_object()) return "not an object";
  if (!c.contains("index") || !c["index"].is_number_integer()) return "no integer \"index\"";
  for (const char* key : {"id", "backend", "outcome"})
    if (!c.contains(key) || !c[key].is_string()) return cat("no string \"", key, "\"");
  if (!c.contains("seconds") || !c["seconds"].is_number()) return "no number \"seconds\"";
  if (!c.contains("outputs") || !c["outputs"].is_array()) return "no \"outputs\" list";
  if (!parse_outcome(c["outcome"].get<std::string>())) return cat("unknown outcome ", c["outcome"].dump());
  return "";
}

}  // namespace

ShardReport read_shard(const std::string& file) {
  ShardReport x;
  x.file = file;
  x.report = read_report(file);
  const json& r = x.report;
  auto need = [&](const char* key, bool ok, const char* what) {
    if (!ok) throw std::runtime_error(cat(file, " is not a complete touchstone report: \"", key, "\" is not ", what));
  };
  for (const char* key : {"tool", "sweep", "shard", "totals"}) need(key, r.contains(key) && r[key].is_object(), "an object");
  for (const char* key : {"devices", "groups", "cases"}) need(key, r.contains(key) && r[key].is_array(), "a list");
  need("coverage", r.contains("coverage") && r["coverage"].is_object(), "an object");
  need("xfail", r.contains("xfail") && (r["xfail"].is_null() || r["xfail"].is_object()), "null or an object");
  need("state", r.contains("state") && r["state"].is_string(), "a string");
  const json& s = r["shard"];
  auto integer = [&](const char* key) {
    need("shard", s.contains(key) && s[key].is_number_integer(), cat("{\"index\": I, \"count\": N} of integers").c_str());
    return s[key].get<int64_t>();
  };
  const int64_t index = integer("index"), count = integer("count");
  if (count < 1 || count > int64_t(kMaxShards) || index < 0 || index >= count)
    throw std::runtime_error(cat(file, ": \"shard\": {\"index\": ", index, ", \"count\": ", count,
                                 "} is no shard: --shard I/N needs 0 <= I < N <= ", kMaxShards));
  x.shard = uint32_t(index), x.shards = uint32_t(count);
  for (const json& d : r["devices"]) {
    need("devices", d.is_object() && d.contains("backend") && d["backend"].is_string(), "a list of {\"backend\", ...}");
    if (d.contains("name") && !has(x.ran, d["backend"])) x.ran.push_back(d["backend"]);
  }
  return x;
}

SweepCases regenerate_sweep(const json& sweep, const std::string& file) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(cat(file, " states a sweep that touchstone does not draw: ", why));
  };
  SweepPlan plan;
  const json& p = sweep.contains("plan") ? sweep["plan"] : json();
  if (!p.is_array() || p.empty()) throw bad("\"plan\" is not a list of {\"op\", \"dtypes\"}");
  for (const json& e : p) {
    if (!e.is_object() || !e.contains("op") || !e["op"].is_string() || !e.contains("dtypes") || !e["dtypes"].is_array())
      throw bad(cat("plan entry ", e.dump(), " is not {\"op\", \"dtypes\"}"));
    const OpDef* op = find_op(e["op"].get<std::string>());
    if (!op) throw bad(cat("unknown operator ", e["op"].dump()));
    std::vector<DType> dtypes;
    for (const json& d : e["dtypes"]) {
      const std::optional<DType> t = d.is_string() ? parse_dtype(d.get<std::string>()) : std::nullopt;
      if (!t || std::find(op->dtypes.begin(), op->dtypes.end(), *t) == op->dtypes.end())
        throw bad(cat("operator ", op->name, " does not define dtype ", d.dump()));
      dtypes.push_back(*t);
    }
    plan.push_back({op, dtypes});
  }
  CheckOptions o;
  const json cases = sweep.contains("cases") ? sweep["cases"] : json();
  if (!cases.is_number_integer() || cases.get<int64_t>() < 1 || cases.get<int64_t>() > int64_t(kMaxCases))
    throw bad(cat("\"cases\" is ", cases.dump(), ", not an integer in 1..", kMaxCases));
  o.cases = cases.get<int64_t>();
  if (!sweep.contains("seed") || !sweep["seed"].is_number_unsigned())
    throw bad(cat("\"seed\" is ", sweep.value("seed", json()).dump(), ", not an integer in 0..2^64-1"));
  o.seed = sweep["seed"].get<uint64_t>();
  const json match = sweep.contains("match") ? sweep["match"] : json();
  if (!match.is_null() && !match.is_string()) throw bad(cat("\"match\" is ", match.dump(), ", not null or a regex"));
  if (match.is_string()) o.match = match.get<std::string>();
  SweepCases out;
  try {
    for_each_case(o, plan, [&](uint64_t position, const OpDef& op, DType t, const std::string& id) {
      out.positions.push_back(position);
      out.at.emplace(position, SweepCase{&op, t, id});
    });
  } catch (const UsageError& e) {
    throw bad(e.what());
  }
  return out;
}

std::vector<std::string> case_problems(const std::vector<ShardReport>& in, const SweepCases& sweep) {
  constexpr size_t kShown = 20;  // problems named before the rest are left out
  std::vector<std::string> problems;
  std::map<std::string, std::unordered_map<uint64_t, const ShardReport*>> seen;  // backend -> position -> file
  std::map<std::pair<std::string, uint32_t>, const ShardReport*> owner;        // (backend, shard) -> file
  for (const ShardReport& x : in) {
    for (const std::string& b : x.ran) owner.emplace(std::pair{b, x.shard}, &x);
    for (const json& c : x.report["cases"]) {
      if (problems.size() >= kShown) return problems;
      if (std::string why = malformed(c); !why.empty()) {
        problems.push_back(cat(x.file, " holds a case merge cannot read (", why, "): ", c.dump().substr(0, 160)));
        continue;
      }
      const int64_t index = c["index"];
      const std::string id = c["id"], backend = c["backend"];
      const auto it = index >= 0 ? sweep.at.find(uint64_t(index)) : sweep.at.end();
      if (it == sweep.at.end()) {
        problems.push_back(cat(x.file, " holds case ", id, " at index ", index, ", a position its sweep does not run"));
        continue;
      }
      if (it->second.id != id) {
        problems.push_back(cat(x.file, " holds case ", id, " at index ", index, ", where its sweep has ", it->second.id));
        continue;
      }
      if (uint64_t(index) % x.shards != x.shard)
        problems.push_back(cat(x.file, " holds case ", index, " (", id, "), which is not in its shard ", shard_str(x.shard, x.shards)));
      if (!has(x.ran, backend))
        problems.push_back(cat(x.file, " holds case ", id, " on ", backend, ", a backend that did not run there (its \"devices\")"));
      auto [where, fresh] = seen[backend].emplace(uint64_t(index), &x);
      if (!fresh)
        problems.push_back(cat("case ", id, " on ", backend, " is in both ", where->second->file, " and ", x.file,
                               ": the shards overlap"));
    }
  }
  // What each complete shard lacks, per backend that ran there: counted in one pass over the sweep.
  struct Lack {
    uint64_t want = 0, missing = 0, first = 0;
  };
  std::map<std::pair<std::string, uint32_t>, Lack> lack;
  std::set<std::string> backends;
  for (auto& [key, x] : owner)
    if (x->report["state"] == "complete") {
      lack[key];
      backends.insert(key.first);
    }
  const uint32_t shards = in.empty() ? 1 : in[0].shards;
  for (uint64_t p : sweep.positions)
    for (const std::string& b : backends) {
      auto it = lack.find({b, uint32_t(p % shards)});
      if (it == lack.end()) continue;
      Lack& l = it->second;
      ++l.want;
      if (!seen[b].count(p) && !l.missing++) l.first = p;
    }
  for (auto& [key, l] : lack)
    if (l.missing && problems.size() < kShown)
      problems.push_back(cat(owner.at(key)->file, " (shard ", shard_str(key.second, shards), ", backend ", key.first, ") lacks ",
                             l.missing, " of the ", l.want, " cases its sweep runs there; the first is index ", l.first, ", ",
                             sweep.at.at(l.first).id));
  return problems;
}

XfailList recorded_xfail(const json& xfail, const std::string& file) {
  if (xfail.is_null()) return {};
  std::string text;
  try {
    for (const json& e : xfail.at("entries")) {
      std::string line = e.at("entry").get<std::string>();
      if (e.contains("backend")) line += " " + e["backend"].get<std::string>();
      line += "  # " + e.at("reason").get<std::string>();
      if (line.find('\n') != std::string::npos) throw std::runtime_error("an entry holds a line break");
      text += line + "\n";
    }
    return XfailList::parse(text, cat(file, " --xfail entry"));
  } catch (const std::exception& e) {
    throw std::runtime_error(cat(file, " records a --xfail list that does not read as one: ", e.what()));
  }
}

std::map<std::string, Tally> settle_cases(std::vector<ShardReport>& in, const SweepCases& sweep, const XfailList& list) {
  std::map<std::string, Tally> tallies;
  for (ShardReport& x : in) {
    const json& recorded = x.report["xfail"];
    const json& kernels = x.report.contains("kernels") ? x.report["kernels"] : json();
    const std::string dir = kernels.is_object() ? kernels.value("dir", "") : "";
    for (json& c : x.report["cases"]) {
      const SweepCase& sc = sweep.at.at(c["index"].get<uint64_t>());
      const std::string backend = c["backend"], dtype(dtype_name(sc.dtype));
      const Outcome o = *parse_outcome(c["outcome"].get<std::string>());
      const XfailEntry* listed = list.case_entry(sc.id, backend);
      if (!listed) listed = list.pattern_for(sc.op->name, backend, dtype);
      const Mark mark = mark_of(o, listed);
      const std::string group = cat(sc.op->name, "/", backend, "/", dtype);
      c["group"] = group;
      c["status"] = status_name(o, mark);
      c.erase("xfail");
      // The entry as the shard's file recorded it (its FILE:LINE), the same in every shard.
      if (listed) c["xfail"] = recorded.at("entries").at(size_t(listed - list.entries().data()));
      c.erase("repro");
      if (is_failure(o) || mark == Mark::xpass) c["repro"] = repro_line(sc.id, backend, dir);
      tallies[group].add(o, mark, number_value(c.contains("worst") ? c["worst"] : json(0)), c["seconds"].get<double>());
    }
  }
  return tallies;
}

}  // namespace ts
