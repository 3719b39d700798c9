#include "tools/report_json.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/compare.h"
#include "core/contract.h"
#include "goldens/files.h"
#include "goldens/json_read.h"
#include "tools/check_pipeline.h"
#include "tools/shell_quote.h"

namespace ts {
namespace {

using nlohmann::json;

constexpr size_t kMaxDimBins = 256;  // mismatches per dimension: longer dimensions are binned

// Three significant digits: what a map cell is read for, at a fifth of the bytes.
json rounded(double v) {
  if (!std::isfinite(v)) return number(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return std::strtod(buf, nullptr);
}

json dims_json(const std::vector<std::vector<int64_t>>& per_dim) {
  json out = json::array();
  for (const auto& counts : per_dim) {
    const size_t n = counts.size(), step = std::max<size_t>(1, (n + kMaxDimBins - 1) / kMaxDimBins);
    json bins = json::array();
    for (size_t i = 0; i < n; i += step) {
      int64_t s = 0;
      for (size_t j = i; j < std::min(n, i + step); ++j) s += counts[j];
      bins.push_back(s);
    }
    out.push_back({{"size", n}, {"step", step}, {"counts", std::move(bins)}});
  }
  return out;
}

json map_json(const ErrorMap& m) {
  json rows = json::array();
  for (int64_t r = 0; r < m.rows; ++r) {
    json row = json::array();
    for (int64_t c = 0; c < m.cols; ++c) row.push_back(rounded(m.at(r, c)));
    rows.push_back(std::move(row));
  }
  return {{"dims", {m.row_dim, m.col_dim}}, {"step", {m.row_step, m.col_step}}, {"cells", std::move(rows)}};
}

json output_json(const CompareReport& rep, bool detailed) {
  json o = {{"name", rep.output},         {"elements", rep.count},        {"mismatches", rep.mismatches},
            {"unwritten", rep.unwritten}, {"max_abs", number(rep.max_abs)}, {"max_rel", number(rep.max_rel)},
            {"nmse", number(rep.nmse)},   {"max_ulp", rep.max_ulp},        {"worst", number(rep.worst)}};
  Shape shape;
  for (auto& d : rep.bad_per_dim) shape.push_back(int64_t(d.size()));
  if (!rep.bad_per_dim.empty() || rep.count == 1) o["shape"] = shape;
  if (rep.first_bad >= 0) {
    json at = json::array();
    for (size_t d = shape.size(), flat = size_t(rep.first_bad); d-- > 0;) {
      at.insert(at.begin(), shape[d] ? int64_t(flat % size_t(shape[d])) : 0);
      flat = shape[d] ? flat / size_t(shape[d]) : 0;
    }
    o["first_mismatch"] = {{"flat", rep.first_bad}, {"at", at}, {"got", number(rep.first_got)},
                           {"want", number(rep.first_want)}, {"allowed", number(rep.first_allowed)}};
  }
  if (detailed && !rep.ok()) {
    if (!rep.bad_per_dim.empty()) o["mismatches_per_dim"] = dims_json(rep.bad_per_dim);
    if (!rep.map.empty()) o["map"] = map_json(rep.map);
  }
  return o;
}

}  // namespace

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_value(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return INFINITY;
  if (j == "-inf") return -INFINITY;
  return NAN;
}

std::string repro_line(const std::string& id, const std::string& backend, const std::string& kernels) {
  return cat("touchstone repro ", shell_quote(id), " --backend ", backend, kernels.empty() ? "" : cat(" --kernels ", shell_quote(kernels)));
}

json xfail_json(const XfailEntry& e) {
  json j = {{"entry", e.entry}, {"reason", e.reason}, {"where", e.where}};
  if (!e.backend.empty()) j["backend"] = e.backend;  // a case entry for one backend: merge re-reads the list
  return j;
}

XfailEntry xfail_from_json(const json& j) {
  XfailEntry e;
  e.entry = j.at("entry").get<std::string>();
  e.reason = j.at("reason").get<std::string>();
  e.where = j.at("where").get<std::string>();
  e.backend = j.value("backend", "");
  return e;
}

json case_json(const CaseResult& r, const CaseNote& n) {
  json c = {{"id", r.id},
            {"backend", r.backend},
            {"group", n.group},
            {"index", n.index},
            {"outcome", outcome_name(r.outcome)},
            {"status", status_name(r.outcome, n.mark)},
            {"seconds", r.seconds},
            {"worst", number(r.worst)},
            {"elements", n.elements}};
  if (!r.rule.empty()) c["rule"] = r.rule;
  if (!r.capability.empty()) c["capability"] = r.capability;
  if (!r.detail.empty()) c["detail"] = r.detail;
  if (!r.kernels.empty()) c["kernels"] = r.kernels;
  if (r.worst_own >= 0) c["worst_own"] = number(r.worst_own);
  if (n.xfail) c["xfail"] = xfail_json(*n.xfail);
  if (is_failure(r.outcome) || n.mark == Mark::xpass || n.mark == Mark::unexpected_unsupported) c["repro"] = repro_line(r.id, r.backend, n.kernels);
  json outs = json::array();
  for (const CompareReport& rep : r.reports) outs.push_back(output_json(rep, n.detailed));
  c["outputs"] = std::move(outs);
  json guards = json::array();
  for (auto& [name, g] : r.guards)
    if (g.bad_bytes || g.bad_padding)
      guards.push_back({{"name", name}, {"bad_bytes", g.bad_bytes}, {"first_offset", g.first_offset},
                        {"bad_padding", g.bad_padding}, {"first_bad_texel", g.first_bad_texel}});
  if (!guards.empty()) c["guards"] = std::move(guards);
  return c;
}

json tally_json(const Tally& t) {
  return {{"cases", t.cases},   {"pass", t.pass},       {"fail", t.fail},         {"rejected", t.rejected},
          {"unsupported", t.unsupported}, {"error", t.error}, {"mismatch", t.mismatch}, {"xfail", t.xfail},
          {"xpass", t.xpass},   {"unexpected_unsupported", t.unexpected_unsupported},
          {"worst", number(t.worst)}, {"seconds", t.seconds}};
}

Tally tally_from_json(const json& j) {
  Tally t;
  t.cases = j.at("cases"), t.pass = j.at("pass"), t.fail = j.at("fail"), t.rejected = j.at("rejected");
  t.unsupported = j.at("unsupported"), t.error = j.at("error"), t.mismatch = j.at("mismatch");
  t.xfail = j.at("xfail"), t.xpass = j.at("xpass");
  t.unexpected_unsupported = j.value("unexpected_unsupported", 0LL);  // absent before device profiles
  t.worst = number_value(j.at("worst"));
  t.seconds = j.at("seconds");
  return t;
}

json device_json(const std::string& backend, const DeviceInfo* info, const std::string& unavailable) {
  if (!info) return {{"backend", backend}, {"unavailable", unavailable}};
  return {{"backend", backend}, {"name", info->name}, {"capabilities", info->capabilities}};
}

JsonReport::JsonReport(std::string path) : path_(std::move(path)), cases_(path_) {}

void JsonReport::mark_started(const std::string& what) {
  json notice = {{"schema", kReportSchema},
                 {"state", "running"},
                 {"note", cat(what, " started at ", utc_now(),
                              " and has not finished: it is still running, or was killed or crashed. This file "
                              "holds no results yet.")}};
  write_notice(path_, notice.dump(1) + "\n");
}

void JsonReport::add(const json& one_case) {
  cases_.append(first_ ? "\n" : ",\n");
  cases_.append(one_case.dump(-1, ' ', false, json::error_handler_t::replace));
  first_ = false;
}

void JsonReport::finish(const json& head) {
  // The schema and state first, where a reader (or `head -3`) looks.
  json rest = head;
  rest.erase("schema");
  rest.erase("state");
  std::string text = cat("{\n \"schema\": ", json(kReportSchema).dump(), ",\n \"state\": ", head.at("state").dump(), ",",
                         rest.dump(1, ' ', false, json::error_handler_t::replace).substr(1));
  if (text.size() < 2 || text.back() != '}') throw std::logic_error("JsonReport::finish: the head is not an object");
  text.pop_back();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  text += text.back() == '{' ? "\"cases\": [" : ",\n \"cases\": [";
  write_report(path_, [&](std::FILE* f, const std::string& name) {
    put(f, text, name);
    cases_.copy_to(f, name);
    put(f, "\n]}\n", name);
  });
}

json read_report(const std::string& path) {
  // The golden reader's limits: merge holds every input parsed at once (about 10x its text), so a
  // shard report past 1 GiB could not be merged on a CI runner anyway, and copying or comparing a
  // value nested past 32 levels would recurse once per level (a report is 8 deep).
  const json j = read_json_file(path, kMaxReadBytes);
  if (!j.is_object() || !j.contains("schema"))
    throw std::runtime_error(cat(path, " is not a touchstone report (no \"schema\")"));
  if (j["schema"] != kReportSchema)
    throw std::runtime_error(cat(path, " has schema ", j["schema"].dump(), ", this touchstone reads ", kReportSchema));
  if (j.value("state", "") == "running")
    throw std::runtime_error(cat(path, " is the placeholder of a run that never finished: ", j.value("note", "")));
  return j;
}

namespace {

// check --json: the cases stream to the report as they come; the head is written at the end.
class JsonCheckReporter : public CheckReporter {
 public:
  explicit JsonCheckReporter(const CheckOptions& o) : report_(o.json), kernels_(o.backends.kernels.dir) {
    report_.mark_started("touchstone check");
  }
  void result(const CaseVerdict& v) override { report_.add(v.json(v.detailed, kernels_)); }
  void run_finished(const FinishedRun& end) override { report_.finish(end.head()); }

 private:
  JsonReport report_;
  std::string kernels_;
};

}  // namespace

std::unique_ptr<CheckReporter> json_reporter(const CheckOptions& o) { return std::make_unique<JsonCheckReporter>(o); }

}  // namespace ts
