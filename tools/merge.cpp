// touchstone merge OUT.json IN.json...: the --json reports of `check --shard i/n` runs (on one or
// many machines, with one or many backends each) as one report, after checking that they fit:
// the same sweep (drawn by this touchstone's generators: the same draw_version) and known-failure
// list, every shard index 0..n-1 present once per backend that ran, each shard holding exactly the
// cases its sweep runs there (tools/merge_sweep.h), no case twice.
// Anything that does not fit is an error naming the files, and nothing is written. The verdict is
// recomputed from the cases' outcomes: no shard's tallies or statuses are taken on trust.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/contract.h"
#include "goldens/files.h"
#include "properties/generators.h"
#include "tools/backends.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/html_report.h"
#include "tools/junit.h"
#include "tools/merge_sweep.h"
#include "tools/report_json.h"

namespace ts {
namespace {

using nlohmann::json;

using Input = ShardReport;

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

// The version of the draws a report's sweep states (null in a report written before versioned draws).
json draw_version(const Input& x) { return x.report.at("sweep").value("draw_version", json()); }
std::string shown(const json& version) { return version.is_null() ? "none (a report from before versioned draws)" : version.dump(); }

std::vector<std::string> fit_problems(const std::vector<Input>& in) {
  std::vector<std::string> problems;
  const Input& ref = in[0];
  for (const Input& x : in) {
    if (x.report.at("tool").value("command", "") != "check")
      problems.push_back(cat(x.file, " is a report of `touchstone ", x.report.at("tool").value("command", "?"),
                             "`, not of a check sweep"));
    if (&x == &ref) {
      // The ids merge draws again must be the ones the shards drew (properties/generators.h).
      if (draw_version(x) != json(kSweepVersion))
        problems.push_back(cat(x.file, " was drawn with draw_version ", shown(draw_version(x)), " but this touchstone draws with ",
                               kSweepVersion, ": its case ids name other cases here; merge with the touchstone that ran the shards"));
      continue;
    }
    if (draw_version(x) != draw_version(ref))
      problems.push_back(cat(x.file, " and ", ref.file, " were drawn by different generators (draw_version ", shown(draw_version(x)),
                             " vs ", shown(draw_version(ref)), "): the same index names different cases in them"));
    json a = x.report.at("sweep"), b = ref.report.at("sweep");
    a.erase("draw_version");
    b.erase("draw_version");
    if (a != b)
      problems.push_back(cat(x.file, " and ", ref.file, " are different sweeps (", difference(a, b),
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
  return problems;
}

// The merged head: the groups of the sweep's plan on every backend any input names, each with the
// tally recomputed from its cases (`tallies`, settle_cases) and its --xfail pattern from `list`.
json merged_head(const std::vector<Input>& in, const std::map<std::string, Tally>& tallies, const XfailList& list) {
  const json& ref = in[0].report;
  std::vector<std::string> backends;  // every backend any input names, in known_backends() order
  std::set<std::string> ran;
  std::string state = "complete", stop_reason;
  json devices = json::array(), inputs = json::array();
  std::map<uint32_t, std::map<std::string, std::map<std::string, long long>>> coverage;  // shard -> op -> class
  std::map<std::string, json> smallest;  // group name -> the smallest failure any input shows
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
    for (const json& d : r.at("devices")) {
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
      if (std::find(backends.begin(), backends.end(), d.at("backend")) == backends.end()) backends.push_back(d.at("backend"));
    }
    ran.insert(x.ran.begin(), x.ran.end());
    for (auto& [op, classes] : r.at("coverage").items())
      for (auto& [cls, n] : classes.items()) {
        long long& have = coverage[x.shard][op][cls];
        have = std::max(have, n.get<long long>());  // the same shard on several machines saw the same cases
      }
    runs += (long long)r.at("cases").size();
    seconds += r.value("seconds", 0.0);
    if (started.empty() || r.value("started", "") < started) started = r.value("started", "");
    for (const json& g : r.at("groups")) {
      if (!g.is_object() || !g.contains("smallest_failing") || !g.contains("name")) continue;
      const json& c = g["smallest_failing"].at("case");
      json& have = smallest[g["name"].get<std::string>()];
      if (have.is_null() || c.at("elements") < have.at("case").at("elements") ||
          (c.at("elements") == have.at("case").at("elements") &&
           c.at("id").get<std::string>().size() < have.at("case").at("id").get<std::string>().size()))
        have = g["smallest_failing"];
    }
  }
  std::stable_sort(backends.begin(), backends.end(), [](auto& a, auto& b) { return backend_rank(a) < backend_rank(b); });
  json gs = json::array();
  Tally total;
  bool bad = state != "complete";
  for (const json& p : ref.at("sweep").at("plan"))
    for (const json& d : p.at("dtypes"))
      for (const std::string& b : backends) {
        const std::string op = p.at("op"), dtype = d, name = cat(op, "/", b, "/", dtype);
        const auto it = tallies.find(name);
        const Tally t = it == tallies.end() ? Tally{} : it->second;
        json g = {{"name", name}, {"op", op}, {"backend", b}, {"dtype", dtype}, {"available", ran.count(b) > 0}, {"tally", tally_json(t)}};
        if (const XfailEntry* e = list.pattern_for(op, b, dtype)) {
          g["pattern"] = xfail_json(*e);
          g["pattern_stale"] = state == "complete" && ran.count(b) ? json(t.pattern_stale()) : json();
          bad |= g["pattern_stale"] == true;
        }
        // Shown only where the recomputed tally has an unexpected failure to show.
        if (t.failing() && smallest.count(name)) g["smallest_failing"] = smallest[name];
        bad |= t.bad();
        total.add(t);
        gs.push_back(std::move(g));
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

// Two of merge's files naming one: an output written over an input (or over another output) would
// destroy what the merge reads, or half of what it writes. A usage error naming both.
void refuse_shared_files(const MergeOptions& o) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> files = {{"OUT", o.out}, {"--junit", o.junit}, {"--html", o.html}};
  const size_t outputs = files.size();
  for (const std::string& f : o.inputs) files.push_back({"input", f});
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::equivalent(a, b, ec)) return true;  // one file, by any name or link
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec) && !ec;
  };
  for (size_t i = 0; i < outputs; ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (!files[i].second.empty() && !files[j].second.empty() && same(files[i].second, files[j].second))
        throw UsageError(cat("merge: ", files[i].first, " ", files[i].second, " and ", files[j].first, " ", files[j].second,
                             " name the same file; every output must be a file of its own, apart from the inputs"));
}

int cmd_merge(const MergeOptions& o) {
  refuse_shared_files(o);
  for (const std::string* out : {&o.out, &o.junit, &o.html})
    if (!out->empty()) check_output_path(*out);
  std::vector<Input> in;
  for (const std::string& f : o.inputs) in.push_back(read_shard(f));
  auto refuse = [&](const std::vector<std::string>& problems) {
    for (const std::string& p : problems) std::fprintf(stderr, "error: %s\n", p.c_str());
    std::fprintf(stderr, "touchstone merge: the reports do not fit together; %s was not written\n", o.out.c_str());
    return 2;
  };
  if (auto problems = fit_problems(in); !problems.empty()) return refuse(problems);
  SweepCases sweep;
  XfailList list;
  try {
    sweep = regenerate_sweep(in[0].report["sweep"], in[0].file);
    list = recorded_xfail(in[0].report["xfail"], in[0].file);
  } catch (const std::runtime_error& e) {
    return refuse({e.what()});
  }
  if (auto problems = case_problems(in, sweep); !problems.empty()) return refuse(problems);
  const std::map<std::string, Tally> tallies = settle_cases(in, sweep, list);
  const json head = merged_head(in, tallies, list);
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

Command add_merge_command(CLI::App& app) {
  auto a = std::make_shared<MergeOptions>();
  CLI::App* merge = app.add_subcommand(
      "merge", wrap("combine the --json reports of `check --shard I/N` runs (any machines, any backends each) into "
                    "one report. They must fit: the same sweep (--op, --dtype, --cases, --seed, --match), --xfail list "
                    "and --kernels, every shard 0..N-1 once per backend that ran, no case twice; otherwise each "
                    "problem is named and nothing is written (exit 2). Exit 0 when the merged sweep passes, 1 when "
                    "it has a failure, an XPASS (known-failure patterns are decided here, over every shard) or a "
                    "shard that stopped early"));
  merge->add_option("OUT", a->out, "the merged JSON report")->required()->type_name("");
  merge->add_option("INPUTS", a->inputs, "the shards' JSON reports")->required()->type_name("");
  single_option(merge, "--junit", a->junit, "FILE", "also write the merged JUnit XML");
  single_option(merge, "--html", a->html, "FILE", "also write the merged HTML page");
  return {merge, [a] {
            std::vector<NamedFile> in;
            for (const std::string& f : a->inputs) in.push_back({"input", f});
            require_distinct({{"OUT", a->out}, {"--junit", a->junit}, {"--html", a->html}}, {}, in);
            return cmd_merge(*a);
          }};
}

}  // namespace ts
