#include "tools/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/contract.h"
#include "tools/check_pipeline.h"
#include "tools/junit.h"
#include "tools/report_json.h"

namespace ts {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) { return xml_text(s); }
std::string esc(const json& j) { return xml_text(j.is_string() ? j.get<std::string>() : j.dump()); }

std::string fmt(double v, const char* f = "%.3g") {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// |error| / tolerance to a colour: within tolerance pale green to yellow (1), past it orange to dark
// red (1000x and beyond); infinite (NaN, unwritten) black.
std::string colour(double r) {
  if (!std::isfinite(r)) return "#000000";
  auto mix = [](int a[3], int b[3], double t) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(a[0] + (b[0] - a[0]) * t), int(a[1] + (b[1] - a[1]) * t),
                  int(a[2] + (b[2] - a[2]) * t));
    return std::string(buf);
  };
  int green[3] = {0xe8, 0xf5, 0xe9}, yellow[3] = {0xff, 0xeb, 0x3b}, orange[3] = {0xff, 0x98, 0x00},
      red[3] = {0x8b, 0x00, 0x00};
  if (r <= 1) return mix(green, yellow, std::clamp(r, 0.0, 1.0));
  const double t = std::clamp(std::log10(r) / 3, 0.0, 1.0);
  return mix(orange, red, t);
}

const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.bad td { background: #fde0dc; }
tr.xfail td { background: #fff8e1; }
td.zero { background: #fde0dc; }
pre { background: #f4f4f4; padding: 4px; white-space: pre-wrap; }
section.case { border-top: 1px solid #aaa; margin-top: 1.5em; }
.gate-pass { color: #1b5e20; } .gate-fail { color: #b71c1c; }
)";

std::string summary_table(const json& head) {
  std::string s = "<table><tr><th>op/backend/dtype</th><th>cases</th><th>pass</th><th>fail</th><th>rejected</th>"
                  "<th>unsupported</th><th>error</th><th>mismatch</th><th>xfail</th><th>xpass</th>"
                  "<th>unexpected unsupported</th><th>worst/tol</th><th>seconds</th></tr>\n";
  for (const json& g : head.at("groups")) {
    const json& t = g.at("tally");
    if (!g.value("available", true)) {
      s += cat("<tr class=\"bad\"><td>", esc(g.at("name")), "</td><td colspan=\"12\">UNAVAILABLE</td></tr>\n");
      continue;
    }
    const bool stale = g.contains("pattern_stale") && g["pattern_stale"] == true;
    const long long unexpected = t.value("unexpected_unsupported", 0LL);
    const bool bad = t.at("fail") != 0 || t.at("error") != 0 || t.at("mismatch") != 0 || t.at("xpass") != 0 || stale ||
                     unexpected != 0;
    s += cat("<tr", bad ? " class=\"bad\"" : t.at("xfail") != 0 ? " class=\"xfail\"" : "", "><td>", esc(g.at("name")),
             "</td>");
    for (const char* k : {"cases", "pass", "fail", "rejected", "unsupported", "error", "mismatch", "xfail"})
      s += cat("<td>", t.at(k).dump(), "</td>");
    s += cat("<td>", t.at("xpass").get<long long>() + (stale ? 1 : 0), "</td><td>", unexpected, "</td><td>",
             fmt(number_value(t.at("worst"))),
             "</td><td>", fmt(t.at("seconds").get<double>(), "%.2f"), "</td></tr>\n");
  }
  return s + "</table>\n";
}

std::string coverage_table(const json& head) {
  std::string s = "<table><tr><th>operator</th><th>cases per shape class (0: the sweep missed it)</th></tr>\n";
  for (auto& [op, classes] : head.at("coverage").items()) {
    s += cat("<tr><td>", esc(op), "</td><td style=\"text-align:left\">");
    for (auto& [cls, n] : classes.items())
      s += cat(n == 0 ? "<span class=\"zero\" style=\"background:#fde0dc\">" : "<span>", esc(cls), ": ", n.dump(),
               "</span>; ");
    s += "</td></tr>\n";
  }
  return s + "</table>\n";
}

// Mismatches per index of each dimension, as bars.
std::string dims_svg(const json& dims) {
  std::string s;
  int d = 0;
  for (const json& dim : dims) {
    const json& counts = dim.at("counts");
    long long top = 1;
    for (auto& c : counts) top = std::max(top, c.get<long long>());
    const int w = std::max(2, std::min(12, 480 / std::max<int>(1, int(counts.size()))));
    const int width = w * int(counts.size()) + 2;
    s += cat("<div>dim ", d, " (size ", dim.at("size").dump(),
             dim.at("step") != 1 ? cat(", ", dim.at("step").dump(), " indices a bar") : std::string(), "): ");
    s += cat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"dim\" data-dim=\"", d, "\" width=\"", width,
             "\" height=\"32\" style=\"vertical-align:middle;background:#fafafa\">");
    for (size_t i = 0; i < counts.size(); ++i) {
      const long long c = counts[i].get<long long>();
      const int h = c ? std::max(1, int(30.0 * double(c) / double(top))) : 0;
      s += cat("<rect x=\"", 1 + int(i) * w, "\" y=\"", 31 - h, "\" width=\"", std::max(1, w - 1), "\" height=\"", h,
               "\" fill=\"#c62828\" data-index=\"", i, "\" data-count=\"", c, "\"><title>index ", i * dim.at("step").get<size_t>(),
               ": ", c, " mismatches</title></rect>");
    }
    s += "</svg></div>\n";
    ++d;
  }
  return s;
}

// A page stays a few megabytes however many cases fail: maps past these are left to the JSON report.
constexpr int kMapsPerGroup = 4;   // the smallest failure and the first failing cases
constexpr int kMapsPerPage = 100;

std::string case_section(const json& c, const std::string& heading, bool maps) {
  std::string s = cat("<section class=\"case\" data-id=\"", esc(c.at("id")), "\" data-backend=\"", esc(c.at("backend")),
                      "\"><h3>", esc(c.at("status")), " ", esc(c.at("group")), heading.empty() ? "" : " — ",
                      esc(heading), "</h3>\n<pre>", esc(c.value("repro", repro_line(c.at("id"), c.at("backend")))),
                      "</pre>\n");
  if (c.contains("detail")) s += cat("<p>", esc(c["detail"]), "</p>\n");
  if (c.contains("xfail"))
    s += cat("<p>Known failure: ", esc(c["xfail"].at("where")), ": ", esc(c["xfail"].at("reason")), "</p>\n");
  for (const json& o : c.at("outputs")) {
    if (o.at("mismatches") == 0) continue;
    s += cat("<h4>", esc(o.at("name")), o.contains("shape") ? " " + esc(o["shape"].dump()) : std::string(), ": ",
             o.at("mismatches").dump(), " of ", o.at("elements").dump(), " elements outside tolerance (",
             o.at("unwritten").dump(), " unwritten); max abs ", fmt(number_value(o.at("max_abs"))), ", max rel ",
             fmt(number_value(o.at("max_rel"))), ", NMSE ", fmt(number_value(o.at("nmse"))), ", max ULP ",
             o.at("max_ulp").dump(), ", worst/tol ", fmt(number_value(o.at("worst"))), "</h4>\n");
    if (!maps) {
      if (o.contains("map")) s += "<p>(Heatmap left out: this page draws a few per group; the JSON report has it.)</p>\n";
      continue;
    }
    if (o.contains("map")) s += heatmap_svg(o["map"], o.at("name"));
    if (o.contains("mismatches_per_dim")) s += "<p>Mismatches per dimension:</p>\n" + dims_svg(o["mismatches_per_dim"]);
  }
  return s + "</section>\n";
}

}  // namespace

std::string heatmap_svg(const json& map, const std::string& output) {
  const json& cells = map.at("cells");
  const int rows = int(cells.size()), cols = rows ? int(cells[0].size()) : 0;
  const int cell = std::max(4, std::min(24, 512 / std::max(1, std::max(rows, cols))));
  const int left = 70, top = 20;
  const int width = left + cols * cell + 10, height = std::max(top + rows * cell + 10, 60);
  const json dims = map.at("dims"), step = map.at("step");
  auto axis = [&](int k) {
    const int dim = dims[k].get<int>();
    if (dim < 0) return std::string("(none)");
    const long long st = step[k].get<long long>();
    return cat("dim ", dim, st > 1 ? cat(", ", st, " indices a cell") : std::string());
  };
  std::string s = cat("<div><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" data-output=\"", esc(output),
                      "\" data-rows=\"", rows, "\" data-cols=\"", cols, "\" width=\"", width, "\" height=\"", height, "\">",
                      "<text x=\"", left, "\" y=\"14\" font-size=\"11\">columns: ", esc(axis(1)), "</text>",
                      "<text x=\"2\" y=\"", top + 12, "\" font-size=\"11\">rows:</text><text x=\"2\" y=\"", top + 26,
                      "\" font-size=\"11\">", esc(axis(0)), "</text>");
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double v = number_value(cells[size_t(r)][size_t(c)]);
      const long long r0 = r * step[0].get<long long>(), c0 = c * step[1].get<long long>();
      s += cat("<rect x=\"", left + c * cell, "\" y=\"", top + r * cell, "\" width=\"", cell, "\" height=\"", cell,
               "\" fill=\"", colour(v), "\" data-row=\"", r, "\" data-col=\"", c, "\" data-ratio=\"", fmt(v, "%.6g"),
               "\"><title>row ", r0, ", column ", c0, ": |error|/tolerance ", fmt(v), "</title></rect>");
    }
  return s + "</svg></div>\n";
}

std::string html_report(const json& head, const std::vector<json>& cases) {
  const std::string gate = head.at("totals").value("gate", "fail");
  const std::string cmd = head.at("tool").value("command", "check");
  std::string s = cat("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/>",
                      "<title>touchstone ", esc(cmd), ": ", gate == "pass" ? "PASS" : "FAIL", "</title><style>", kStyle,
                      "</style></head><body>\n<h1>touchstone ", esc(cmd), ": <span class=\"gate-", gate, "\">",
                      gate == "pass" ? "PASS" : "FAIL", "</span></h1>\n<p>");
  s += cat("State ", esc(head.at("state")), head.contains("stop_reason") ? " (" + esc(head["stop_reason"]) + ")" : "",
           "; started ", esc(head.value("started", "")), "; ", fmt(head.value("seconds", 0.0), "%.1f"), " s; ",
           head.at("totals").at("case_runs").dump(), " case runs");
  if (head.contains("sweep")) {
    const json& sw = head["sweep"];
    s += cat("; ", sw.at("cases").dump(), " cases per operator x dtype, seed ", sw.at("seed").dump());
    if (!sw.at("match").is_null()) s += cat(", --match ", esc(sw["match"]));
  }
  if (head.contains("shard") && head["shard"].at("count") != 1)
    s += cat("; shard ", head["shard"].at("index").dump(), "/", head["shard"].at("count").dump());
  s += ".</p>\n<p>Devices: ";
  for (const json& d : head.at("devices"))
    s += cat(esc(d.at("backend")), " ", d.contains("name") ? esc(d["name"]) : "UNAVAILABLE (" + esc(d.value("unavailable", "")) + ")",
             "; ");
  s += "</p>\n<h2>Summary</h2>\n" + summary_table(head) + "<h2>Coverage</h2>\n" + coverage_table(head);

  std::string failing;
  std::set<std::string> drawn;
  std::map<std::string, int> maps_of_group;
  int maps = 0;
  auto draw = [&](const json& c, const std::string& heading) {
    const std::string key = c.at("id").get<std::string>() + "\n" + c.at("backend").get<std::string>();
    if (!drawn.insert(key).second) return;
    const bool with_maps = maps < kMapsPerPage && maps_of_group[c.at("group")]++ < kMapsPerGroup;
    maps += with_maps;
    failing += case_section(c, heading, with_maps);
  };
  for (const json& g : head.at("groups"))
    if (g.contains("smallest_failing")) {
      const json& sf = g["smallest_failing"];
      draw(sf.at("case"), sf.contains("shrunk_from") ? cat("smallest failure, shrunk from ", sf["shrunk_from"].get<std::string>())
                                                     : std::string("smallest failure"));
    }
  for (const json& c : cases) draw(c, "");
  for (const json& g : head.at("groups"))
    if (g.contains("pattern_stale") && g["pattern_stale"] == true)
      failing += cat("<section class=\"case\"><h3>XPASS ", esc(g.at("name")), "</h3><p>pattern ",
                     esc(g["pattern"].at("entry")), " (", esc(g["pattern"].at("where")), ": ", esc(g["pattern"].at("reason")),
                     ") names this group, which ran without a failure.</p></section>\n");
  s += "<h2>Failing cases</h2>\n";
  if (!failing.empty()) {
    s += "<p>Heatmaps: |error| / tolerance per cell, the max over what the cell covers: ";
    for (auto [v, label] : {std::pair{0.0, "0"}, {1.0, "1 (the limit)"}, {10.0, "10"}, {1000.0, "1000"}, {INFINITY, "NaN or never written"}})
      s += cat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"",
               colour(v), "\" stroke=\"#999\"/></svg> ", label, " ");
    s += "</p>\n";
  }
  s += failing.empty() ? "<p>None.</p>\n"
                       : cat("<p>Each group's smallest failure first, then its first failing cases, each with a heatmap "
                             "of |error| / tolerance (the JSON report lists every case).</p>\n", failing);
  return s + "</body></html>\n";
}

void write_html(const std::string& path, const json& head, const std::vector<json>& cases) {
  const std::string page = html_report(head, cases);
  write_report(path, [&](std::FILE* f, const std::string& name) { put(f, page, name); });
}

namespace {

// check --html: the page is drawn at the end, from the JSON head and each group's first failing
// cases (those the verdicts mark detailed).
class HtmlCheckReporter : public CheckReporter {
 public:
  explicit HtmlCheckReporter(const CheckOptions& o) : path_(o.html), kernels_(o.backends.kernels.dir) {}
  void sweep_started(const Sweep&, std::span<const Group> groups) override { shown_.resize(shown_.size() + groups.size()); }
  void result(const CaseVerdict& v) override {
    if (v.detailed) shown_[v.group_index].push_back(v.json(true, kernels_));
  }
  void run_finished(const FinishedRun& end) override {
    std::vector<nlohmann::json> cases;
    for (auto& group : shown_) cases.insert(cases.end(), group.begin(), group.end());
    write_html(path_, end.head(), cases);
  }

 private:
  std::string path_, kernels_;
  std::vector<std::vector<nlohmann::json>> shown_;  // per group of the run
};

}  // namespace

std::unique_ptr<CheckReporter> html_reporter(const CheckOptions& o) { return std::make_unique<HtmlCheckReporter>(o); }

}  // namespace ts
