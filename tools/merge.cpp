// touchstone merge OUT.json IN.json...: the --json reports of `check --shard i/n` runs (on one or
// many machines, with one or many backends each) as one report, after checking that they fit:
// the same sweep and known-failure list, every shard index 0..n-1 present once per backend that ran,
// no case run twice. Anything that does not fit is an error naming the files, and nothing is written.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/contract.h"
#include "goldens/files.h"
#include "tools/backends.h"
#include "tools/commands.h"
#include "tools/html_report.h"
#include "tools/junit.h"
#include "tools/report_json.h"

namespace ts {
namespace {

using nlohmann::json;

struct Input {
  std::string file;
  json report;
  uint32_t shard = 0, shards = 1;
  std::vector<std::string> ran;  // backends that could run there
};

std::string shard_str(uint32_t i, uint32_t n) { return cat(i, "/", n); }

size_t backend_rank(const std::string& b) {
  const auto& k = known_backends();
  return size_t(std::find(k.begin(), k.end(), b) - k.begin());
}

// Where two sweeps differ, for the message.
std::string difference(const json& a, const json& b) {
  for (auto& [k, v] : a.items())
    if (!b.contains(k) || b[k] != v) return cat(k, " ", v.dump(), " vs ", b.contains(k) ? b[k].dump() : "nothing");
  for (auto& [k, v] : b.items())
    if (!a.contains(k)) return cat(k, " nothing vs ", v.dump());
  return "?";
}

std::vector<std::string> fit_problems(const std::vector<Input>& in) {
  std::vector<std::string> problems;
  const Input& ref = in[0];
  for (const Input& x : in) {
    if (x.report.at("tool").value("command", "") != "check")
      problems.push_back(cat(x.file, " is a report of `touchstone ", x.report.at("tool").value("command", "?"),
                             "`, not of a check sweep"));
    if (&x == &ref) continue;
    if (x.report.at("sweep") != ref.report.at("sweep"))
      problems.push_back(cat(x.file, " and ", ref.file, " are different sweeps (", difference(x.report["sweep"], ref.report["sweep"]),
                             "): shards must share --op, --dtype, --cases, --seed and --match"));
    if (x.shards != ref.shards)
      problems.push_back(cat(x.file, " is shard ", shard_str(x.shard, x.shards), " but ", ref.file, " is shard ",
                             shard_str(ref.shard, ref.shards), ": every shard must split the sweep into the same N"));
    if (x.report.at("xfail").is_null() != ref.report.at("xfail").is_null() ||
        (!x.report["xfail"].is_null() && x.report["xfail"].at("entries") != ref.report["xfail"].at("entries")))
      problems.push_back(cat(x.file, " and ", ref.file, " used different known-failure lists (--xfail)"));
    // The same device profile: a shard run without one would let an unexpected UNSUPPORTED pass.
    if (x.report.value("expect", json()) != ref.report.value("expect", json()))
      problems.push_back(cat(x.file, " and ", ref.file, " expected different device profiles (--expect)"));
    // The kernels checked must be the same ones: a shard run with --kernels DIR checked other code.
    if (x.report.value("kernels", json()) != ref.report.value("kernels", json()))
      problems.push_back(cat(x.file, " and ", ref.file, " ran different kernels (--kernels)"));
  }
  if (!problems.empty()) return problems;
  // Every backend that ran anywhere ran every shard, once.
  std::map<std::string, std::map<uint32_t, std::string>> seen;  // backend -> shard -> file
  for (const Input& x : in)
    for (const std::string& b : x.ran) {
      auto [it, fresh] = seen[b].emplace(x.shard, x.file);
      if (!fresh)
        problems.push_back(cat("shard ", shard_str(x.shard, x.shards), " of backend ", b, " is in both ", it->second,
                               " and ", x.file, ": the shards overlap"));
    }
  for (auto& [b, shards] : seen) {
    std::string missing;
    for (uint32_t i = 0; i < ref.shards; ++i)
      if (!shards.count(i)) missing += cat(missing.empty() ? "" : ", ", shard_str(i, ref.shards));
    if (!missing.empty())
      problems.push_back(cat("backend ", b, " lacks shard", missing.find(',') != std::string::npos ? "s " : " ", missing,
                             " (a shard's report is missing, or the backend was UNAVAILABLE there): the merge would "
                             "not be the whole sweep"));
  }
  // No case twice, and each where its shard puts it.
  std::map<std::pair<int64_t, std::string>, const Input*> where;
  for (const Input& x : in)
    for (const json& c : x.report.at("cases")) {
      const int64_t index = c.at("index");
      const std::string backend = c.at("backend");
      if (uint64_t(index) % x.shards != x.shard)
        problems.push_back(cat(x.file, " holds case ", index, " (", c.at("id").get<std::string>(), "), which is not in its shard ",
                               shard_str(x.shard, x.shards)));
      auto [it, fresh] = where.emplace(std::pair{index, backend}, &x);
      if (!fresh)
        problems.push_back(cat("case ", c.at("id").get<std::string>(), " on ", backend, " is in both ", it->second->file,
                               " and ", x.file, ": the shards overlap"));
      if (problems.size() > 20) return problems;
    }
  return problems;
}

json merged_head(const std::vector<Input>& in) {
  const json& ref = in[0].report;
  // Groups in the sweep's order: operator, dtype, backend.
  std::map<std::string, size_t> op_rank, dtype_rank;
  for (const json& p : ref.at("sweep").at("plan")) {
    op_rank.emplace(p.at("op"), op_rank.size());
    for (const json& d : p.at("dtypes")) dtype_rank.emplace(d, dtype_rank.size());
  }
  std::map<std::tuple<size_t, size_t, size_t>, json> groups;
  std::map<std::string, Tally> tallies;
  std::string state = "complete", stop_reason;
  json devices = json::array(), inputs = json::array();
  std::map<uint32_t, std::map<std::string, std::map<std::string, long long>>> coverage;  // shard -> op -> class
  long long runs = 0;
  double seconds = 0;
  std::string started;
  for (const Input& x : in) {
    const json& r = x.report;
    inputs.push_back({{"file", x.file}, {"shard", r.at("shard")}, {"state", r.at("state")}, {"backends", x.ran}});
    if (r.at("state") != "complete") {
      if (state != "interrupted") state = r["state"];
      stop_reason += cat(stop_reason.empty() ? "" : "; ", x.file, ": ", r.value("stop_reason", r["state"].get<std::string>()));
    }
    for (const json& d : r.at("devices"))
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    for (auto& [op, classes] : r.at("coverage").items())
      for (auto& [cls, n] : classes.items()) {
        long long& have = coverage[x.shard][op][cls];
        have = std::max(have, n.get<long long>());  // the same shard on several machines saw the same cases
      }
    runs += r.at("totals").at("case_runs").get<long long>();
    seconds += r.value("seconds", 0.0);
    if (started.empty() || r.value("started", "") < started) started = r.value("started", "");
    for (const json& g : r.at("groups")) {
      const std::string name = g.at("name");
      json& m = groups[{op_rank[g.at("op")], dtype_rank[g.at("dtype")], backend_rank(g.at("backend"))}];
      if (m.is_null()) {
        m = g;
        m.erase("smallest_failing");
        m["available"] = false;
      }
      m["available"] = m["available"].get<bool>() || g.at("available").get<bool>();
      if (g.at("available").get<bool>()) tallies[name].add(tally_from_json(g.at("tally")));
      if (g.contains("smallest_failing")) {
        const json& c = g["smallest_failing"].at("case");
        const json* have = m.contains("smallest_failing") ? &m["smallest_failing"].at("case") : nullptr;
        if (!have || c.at("elements") < have->at("elements") ||
            (c.at("elements") == have->at("elements") && c.at("id").get<std::string>().size() < have->at("id").get<std::string>().size()))
          m["smallest_failing"] = g["smallest_failing"];
      }
    }
  }
  json gs = json::array();
  Tally total;
  bool bad = state != "complete";
  for (auto& [key, g] : groups) {
    const Tally& t = tallies[g.at("name")];
    g["tally"] = tally_json(t);
    if (g.contains("pattern")) {
      g["pattern_stale"] = state == "complete" && g["available"] == true ? json(t.pattern_stale()) : json();
      bad |= g["pattern_stale"] == true;
    }
    bad |= t.bad();
    total.add(t);
    gs.push_back(g);
  }
  std::map<std::string, std::map<std::string, long long>> cov;
  for (auto& [shard, ops] : coverage)
    for (auto& [op, classes] : ops)
      for (auto& [cls, n] : classes) cov[op][cls] += n;
  json totals = tally_json(total);
  totals["case_runs"] = runs;
  totals["gate"] = bad ? "fail" : "pass";
  json head = {{"schema", kReportSchema},
               {"state", state},
               {"tool", {{"command", "merge"}, {"inputs", inputs}}},
               {"started", started},
               {"seconds", seconds},
               {"sweep", ref.at("sweep")},
               {"shard", {{"index", 0}, {"count", 1}}},
               {"xfail", ref.at("xfail")},
               {"kernels", ref.value("kernels", json())},
               {"expect", ref.value("expect", json())},
               {"devices", devices},
               {"groups", gs},
               {"coverage", cov},
               {"totals", totals}};
  if (state != "complete") head["stop_reason"] = stop_reason;
  return head;
}

// The merged JUnit report, from the merged cases.
void write_merged_junit(const std::string& path, const json& head, const std::vector<const json*>& cases) {
  JUnitReport junit(path, [](const CaseResult& r) { return repro_line(r.id, r.backend); });
  std::map<std::string, size_t> handle;
  for (const json& g : head.at("groups")) {
    const size_t h = handle[g.at("name")] = junit.add_group(g.at("name"));
    if (!g.at("available").get<bool>()) {
      CaseResult r;
      r.id = "backend unavailable", r.backend = g.at("backend"), r.outcome = Outcome::unsupported;
      r.detail = cat(r.backend, " UNAVAILABLE in every shard");
      junit.add(h, r);
    }
  }
  for (const json* c : cases) {
    CaseResult r;
    r.id = c->at("id"), r.backend = c->at("backend"), r.detail = c->value("detail", "");
    r.capability = c->value("capability", "");
    r.outcome = parse_outcome(c->at("outcome").get<std::string>()).value_or(Outcome::error);
    r.seconds = c->at("seconds");
    const std::string status = c->at("status");
    const Mark mark = parse_mark(status);
    std::optional<XfailEntry> e;
    if (c->contains("xfail")) e = xfail_from_json(c->at("xfail"));
    junit.add(handle.at(c->at("group")), r, mark, e ? &*e : nullptr);
  }
  for (const json& g : head.at("groups"))
    if (g.contains("pattern_stale") && g["pattern_stale"] == true)
      junit.add_notice(handle.at(g.at("name")), cat("xfail ", g["pattern"].at("entry").get<std::string>()), "XPASS",
                       cat("listed as a known failure at ", g["pattern"].at("where").get<std::string>(), " (",
                           g["pattern"].at("reason").get<std::string>(), ") but ", g.at("name").get<std::string>(),
                           " ran without a failure in any shard"));
  const std::string state = head.at("state");
  junit.finish(state == "complete" ? "" : cat("merged from partial shards: ", head.value("stop_reason", "")), state);
}

}  // namespace

int cmd_merge(const MergeOptions& o) {
  for (const std::string* out : {&o.out, &o.junit, &o.html})
    if (!out->empty()) check_output_path(*out);
  std::vector<Input> in;
  for (const std::string& f : o.inputs) {
    Input x;
    x.file = f;
    x.report = read_report(f);
    try {
      x.shard = x.report.at("shard").at("index"), x.shards = x.report.at("shard").at("count");
      for (const json& d : x.report.at("devices"))
        if (d.contains("name")) x.ran.push_back(d.at("backend"));
      x.report.at("cases"), x.report.at("groups"), x.report.at("sweep"), x.report.at("totals");
    } catch (const json::exception& e) {
      throw std::runtime_error(cat(f, " is not a complete touchstone report: ", e.what()));
    }
    in.push_back(std::move(x));
  }
  const auto problems = fit_problems(in);
  if (!problems.empty()) {
    for (const std::string& p : problems) std::fprintf(stderr, "error: %s\n", p.c_str());
    std::fprintf(stderr, "touchstone merge: the reports do not fit together; %s was not written\n", o.out.c_str());
    return 2;
  }
  const json head = merged_head(in);
  std::vector<const json*> cases;
  for (const Input& x : in)
    for (const json& c : x.report.at("cases")) cases.push_back(&c);
  std::stable_sort(cases.begin(), cases.end(), [](const json* a, const json* b) {
    const int64_t ia = a->at("index"), ib = b->at("index");
    return ia != ib ? ia < ib : backend_rank(a->at("backend")) < backend_rank(b->at("backend"));
  });

  JsonReport out(o.out);
  for (const json* c : cases) out.add(*c);
  out.finish(head);
  if (!o.junit.empty()) write_merged_junit(o.junit, head, cases);
  if (!o.html.empty()) {
    std::vector<json> shown;
    for (const json* c : cases)
      for (const json& out : c->at("outputs"))
        if (out.contains("map")) {
          shown.push_back(*c);
          break;
        }
    write_html(o.html, head, shown);
  }
  const json& t = head.at("totals");
  std::printf("merged %zu reports (%u shards): %lld case runs, %lld pass, %lld fail, %lld rejected, %lld unsupported, "
              "%lld error, %lld mismatch, %lld xfail, %lld xpass, %lld unexpected unsupported; state %s; gate %s\n",
              in.size(), in[0].shards, t.at("case_runs").get<long long>(), t.at("pass").get<long long>(),
              t.at("fail").get<long long>(), t.at("rejected").get<long long>(), t.at("unsupported").get<long long>(),
              t.at("error").get<long long>(), t.at("mismatch").get<long long>(), t.at("xfail").get<long long>(),
              t.at("xpass").get<long long>(), t.value("unexpected_unsupported", 0LL), head.at("state").get<std::string>().c_str(),
              t.at("gate") == "pass" ? "PASS" : "FAIL");
  for (const json& g : head.at("groups")) {
    const Tally tl = tally_from_json(g.at("tally"));
    if (tl.bad() || g.value("pattern_stale", json()) == true)
      std::printf("  %-34s %lld fail, %lld error, %lld mismatch, %lld xpass, %lld unexpected unsupported%s\n",
                  g.at("name").get<std::string>().c_str(), tl.fail, tl.error, tl.mismatch, tl.xpass,
                  tl.unexpected_unsupported, g.value("pattern_stale", json()) == true ? ", stale known-failure pattern" : "");
    if (g.contains("smallest_failing"))
      std::printf("    smallest: %s\n", g["smallest_failing"].at("case").value("repro", "").c_str());
  }
  return t.at("gate") == "pass" ? 0 : 1;
}

}  // namespace ts
