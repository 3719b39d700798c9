// The reports people read and the conveniences around them (issue 14), proven on real runs: the
// JSON report validates against its published schema, the HTML heatmap puts a planted error and a
// broken kernel's failing region where they are, the known-failure list follows the XFAIL/XPASS rule
// (a listed case that passes fails the run), --fail-fast stops, check shrinks what it finds, and
// merge rebuilds the unsharded report from shards and refuses shards that do not fit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/compare.h"
#include "core/runner.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "gpu/webgpu/webgpu_backend.h"
#include "gpu/plans/registry.h"
#include "tests/kernel_bugs.h"
#include "tools/check_run.h"
#include "tools/commands.h"
#include "tools/html_report.h"
#include "tools/report_json.h"
#include "tools/shrink.h"
#include "tools/sweep.h"
#include "tools/xfail.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The D%4==2 tail of every row is left as poison (float32's poison pattern stored in those lanes
// alone, so that exactly the tail's elements read as unwritten in every layout).
const std::string kSkipsRaggedTail =
    test::with_bug("gpu/vulkan/shaders/rope_half.comp", "uint d = i % pc.D",
                   "    if (d >= (pc.D / 4u) * 4u) { v[j] = uintBitsToFloat(0x7FD15EA5u); continue; }", true);

std::string temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("ts_reports_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

json load(const std::string& path) { return json::parse(slurp(path)); }

std::string python() {
  for (const char* py : {"/usr/bin/python3", "/usr/local/bin/python3"})
    if (::access(py, X_OK) == 0) return py;
  return "";
}

// Runs tests/report_check.py; its output, and whether it exited 0.
bool report_check(const std::vector<std::string>& args, std::string* out) {
  const std::string py = python();
  if (py.empty()) {
    *out = "no python3";
    return false;
  }
  std::string cmd = py + " " + TS_SOURCE_DIR + "/tests/report_check.py";
  for (auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  out->clear();
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return ::pclose(p) == 0;
}

// The report validates against tools/report.schema.json (python3-jsonschema, which ci/setup.sh installs).
void expect_schema_valid(const std::string& report) {
  std::string out;
  EXPECT_TRUE(report_check({"schema", report, std::string(TS_SOURCE_DIR) + "/tools/report.schema.json"}, &out))
      << report << ": " << out;
}

// "row col" of every cell the page's heatmap of (case, backend, output) draws past the tolerance;
// none when the page has no such heatmap (a failure unless `optional`).
std::optional<std::set<std::pair<int, int>>> hot_cells(const std::string& page, const std::string& id,
                                                       const std::string& backend, const std::string& output,
                                                       std::pair<int, int>* size = nullptr, bool optional = false) {
  std::string out;
  if (!report_check({"heatmap", page, id, backend, output}, &out)) {
    EXPECT_TRUE(optional && out.find("no heatmap") != std::string::npos) << out;
    return std::nullopt;
  }
  std::set<std::pair<int, int>> cells;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    int r, c;
    if (line.rfind("rows ", 0) == 0) {
      if (size) std::sscanf(line.c_str(), "rows %d cols %d", &size->first, &size->second);
    } else if (std::sscanf(line.c_str(), "%d %d", &r, &c) == 2) {
      cells.insert({r, c});
    }
  }
  return cells;
}

// ---- The known-failure list ----

TEST(Xfail, EntriesNeedAReasonAndNameRealThings) {
  XfailList l = XfailList::parse(
      "# known failures\n\n"
      "rope_half/B=1,H=2,S=3,D=6/float32/buffer/seed=1   # the tail is skipped\n"
      "rope_half/B=1,H=2,S=3,D=6/float16/buffer/seed=1 webgpu  # only there\n"
      "sdpa/*/float16  # float16 softmax\n",
      "x.txt");
  ASSERT_EQ(l.entries().size(), 3u);
  EXPECT_TRUE(l.entries()[0].is_case);
  EXPECT_EQ(l.entries()[0].reason, "the tail is skipped");
  EXPECT_EQ(l.entries()[0].where, "x.txt:3");
  EXPECT_NE(l.case_entry("rope_half/B=1,H=2,S=3,D=6/float32/buffer/seed=1", "vulkan"), nullptr);
  EXPECT_EQ(l.case_entry("rope_half/B=1,H=2,S=3,D=6/float16/buffer/seed=1", "vulkan"), nullptr);
  EXPECT_NE(l.case_entry("rope_half/B=1,H=2,S=3,D=6/float16/buffer/seed=1", "webgpu"), nullptr);
  EXPECT_NE(l.pattern_for("sdpa", "vulkan", "float16"), nullptr);
  EXPECT_EQ(l.pattern_for("sdpa", "vulkan", "float32"), nullptr);

  for (auto [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"sdpa/vulkan/float16\n", "x.txt:1: 'sdpa/vulkan/float16' has no reason"},
           {"\nsdpa/vulkan/float16   #   \n", "x.txt:2"},
           {"sdpa/metal/float16  # r\n", "unknown backend 'metal'"},
           {"sdpa/vulkan/float99  # r\n", "unknown dtype 'float99'"},
           {"attention/vulkan/float16  # r\n", "unknown operator 'attention'"},
           {"rope_half/B=1,Pos=3/float32/buffer/seed=1  # r\n", "x.txt:1: not a case id"},
           {"rope_half/B=1,H=2,S=3,D=6/float32/buffer/seed=1 metal  # r\n", "unknown backend 'metal'"},
           {"sdpa/*/*  # a\nsdpa/*/*  # b\n", "listed already at x.txt:1"}}) {
    try {
      XfailList::parse(text, "x.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

TEST(Xfail, AListedCaseThatPassesIsXpassAPatternOnlyWhenItsGroupPassesWhole) {
  XfailEntry one;
  one.is_case = true;
  XfailEntry group;
  EXPECT_EQ(mark_of(Outcome::fail, &one), Mark::xfail);
  EXPECT_EQ(mark_of(Outcome::missed_reject, &one), Mark::xfail);
  EXPECT_EQ(mark_of(Outcome::pass, &one), Mark::xpass);
  EXPECT_EQ(mark_of(Outcome::rejected, &one), Mark::xpass);
  EXPECT_EQ(mark_of(Outcome::unsupported, &one), Mark::none);
  EXPECT_EQ(mark_of(Outcome::fail, &group), Mark::xfail);
  EXPECT_EQ(mark_of(Outcome::pass, &group), Mark::none);
  EXPECT_EQ(mark_of(Outcome::fail, nullptr), Mark::none);
  Tally t;
  t.add(Outcome::pass, Mark::none, 0.5, 0);
  EXPECT_TRUE(t.pattern_stale());
  EXPECT_FALSE(t.bad());
  t.add(Outcome::fail, Mark::xfail, 0, 0);
  EXPECT_FALSE(t.pattern_stale());
  EXPECT_FALSE(t.bad());
  t.add(Outcome::pass, Mark::xpass, 0, 0);
  EXPECT_TRUE(t.bad());
  Tally skipped;
  skipped.add(Outcome::unsupported, Mark::none, 0, 0);
  EXPECT_FALSE(skipped.pattern_stale()) << "a group that ran nothing proves nothing";
}

// ---- The error map and its heatmap ----

// float32 output `shape` equal to its reference but at `bad` (flat indices), where it is off by 1.
CompareReport planted(const Shape& shape, const std::vector<int64_t>& bad, double nan_at = -1) {
  Tensor ref(DType::f64, shape), got(DType::f32, shape);
  for (int64_t i = 0; i < ref.numel(); ++i) {
    ref.set(i, std::sin(double(i)));
    got.set(i, std::sin(double(i)));
  }
  for (int64_t i : bad) got.set(i, got.get(i) + 1);
  if (nan_at >= 0) got.set(int64_t(nan_at), NAN);
  return compare("out", got, ref, Tolerance{1e-6, 1e-6, {}}, false);
}

int64_t flat(const Shape& s, const std::vector<int64_t>& at) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + at[d];
  return f;
}

TEST(ErrorMap, HoldsAPlantedErrorInItsCellAndNothingElse) {
  const Shape s = {2, 3, 40, 8};
  CompareReport r = planted(s, {flat(s, {1, 2, 37, 5})});
  ASSERT_EQ(r.mismatches, 1);
  ASSERT_FALSE(r.map.empty());
  EXPECT_EQ(r.map.row_dim, 2);
  EXPECT_EQ(r.map.col_dim, 3);
  ASSERT_EQ(r.map.rows, 40);
  ASSERT_EQ(r.map.cols, 8);
  for (int64_t row = 0; row < 40; ++row)
    for (int64_t col = 0; col < 8; ++col)
      if (row == 37 && col == 5) EXPECT_GT(r.map.at(row, col), 1e5);
      else EXPECT_LE(r.map.at(row, col), 1.0f) << row << "," << col;
  // Long dimensions share cells; NaN is infinitely wrong.
  const Shape w = {100, 130};
  r = planted(w, {flat(w, {51, 100})}, double(flat(w, {3, 129})));
  EXPECT_EQ(r.map.row_step, 2);
  EXPECT_EQ(r.map.col_step, 3);
  EXPECT_EQ(r.map.rows, 50);
  EXPECT_EQ(r.map.cols, 44);
  EXPECT_GT(r.map.at(25, 33), 1e5);
  EXPECT_TRUE(std::isinf(r.map.at(1, 43)));
  // A passing comparison makes no map (and pays for none); a 1-d output makes one row.
  EXPECT_TRUE(planted(s, {}).map.empty());
  r = planted({10}, {7});
  EXPECT_EQ(r.map.rows, 1);
  EXPECT_EQ(r.map.cols, 10);
  EXPECT_GT(r.map.at(0, 7), 1);
}

json minimal_head(const std::vector<json>& cases) {
  json groups = json::array();
  Tally t;
  t.add(Outcome::fail, Mark::none, 0, 0);
  groups.push_back({{"name", "rope_half/vulkan/float32"}, {"op", "rope_half"}, {"backend", "vulkan"},
                    {"dtype", "float32"}, {"available", true}, {"tally", tally_json(t)}});
  json totals = tally_json(t);
  totals["case_runs"] = cases.size();
  totals["gate"] = "fail";
  return {{"schema", kReportSchema}, {"state", "complete"}, {"tool", {{"command", "check"}}},
          {"started", "2026-01-01T00:00:00Z"}, {"seconds", 1.0}, {"shard", {{"index", 0}, {"count", 1}}},
          {"xfail", nullptr}, {"devices", json::array()}, {"groups", groups}, {"coverage", json::object()},
          {"totals", totals}};
}

TEST(HtmlReport, TheHeatmapShowsAPlantedErrorInItsCell) {
  const Shape s = {2, 3, 40, 8};
  CaseResult r;
  r.id = "rope_half/B=2,H=3,S=40,D=8/float32/buffer/seed=1";
  r.backend = "vulkan";
  r.outcome = Outcome::fail;
  r.detail = "planted <error> & \"quotes\"";
  r.reports.push_back(planted(s, {flat(s, {0, 1, 12, 3})}));
  const json c = case_json(r, CaseNote{"rope_half/vulkan/float32", 5, Mark::none, nullptr, true, 960});
  ASSERT_TRUE(c["outputs"][0].contains("map"));
  const std::string page = temp_dir("planted") + "/page.html";
  write_html(page, minimal_head({c}), {c});
  std::pair<int, int> size;
  EXPECT_EQ(hot_cells(page, r.id, "vulkan", "out", &size), (std::set<std::pair<int, int>>{{12, 3}}));
  EXPECT_FALSE(hot_cells(page, r.id, "webgpu", "out", nullptr, true)) << "a heatmap of another backend";
  EXPECT_EQ(size, std::make_pair(40, 8));
  std::string out;
  EXPECT_TRUE(report_check({"html", page}, &out)) << out;
  EXPECT_NE(slurp(page).find("touchstone repro &apos;" + r.id + "&apos; --backend vulkan"), std::string::npos);
}

// ---- check on a broken kernel, in process ----

std::vector<BackendSlot> vulkan_slot(const std::string& broken_rope_half = "", uint32_t lanes = 0) {
  std::vector<BackendSlot> slots(1);
  slots[0].name = "vulkan";
  slots[0].requested = true;
  auto b = VulkanBackend::create({.lanes = lanes}, &slots[0].unavailable);
  if (b && !broken_rope_half.empty()) b->set_kernel_source("rope_half", broken_rope_half);
  slots[0].backend = std::move(b);
  return slots;
}

CheckOptions rope_half_f32(int cases) {
  CheckOptions o;
  o.ops = {"rope_half"};
  o.dtypes = {"float32"};
  o.cases = cases;
  o.seed = 3;
  o.quiet = true;
  return o;
}

int run_captured(const CheckOptions& o, std::vector<BackendSlot>& slots, std::string* out) {
  ::testing::internal::CaptureStdout();
  const int rc = run_check(o, slots);
  *out = ::testing::internal::GetCapturedStdout();
  return rc;
}

// A check whose lanes run several cases at once (Backend::concurrency) reports what one at a time
// does, case by case and in order: a broken kernel's sweep, and sdpa's (two dispatches, scratch,
// images), each on a backend of its own: Vulkan with 3 cases in flight, WebGPU with 2 Dawn workers.
json cases_run(std::vector<BackendSlot> slots, const CheckOptions& o, unsigned at_once) {
  EXPECT_TRUE(slots[0].backend) << slots[0].unavailable;
  if (!slots[0].backend) return json();
  EXPECT_EQ(slots[0].backend->concurrency(), at_once);
  CheckOptions with = o;
  with.json = temp_dir(cat(slots[0].name, at_once)) + "/r.json";
  std::string out;
  run_captured(with, slots, &out);
  const json rep = load(with.json);
  json kept = json::array();
  for (const json& c : rep["cases"]) kept.push_back({c["index"], c["id"], c["outcome"], c["worst"], c.value("detail", "")});
  return kept;
}

CheckOptions sdpa_f16(int cases) {
  CheckOptions o;
  o.ops = {"sdpa"}, o.dtypes = {"float16"}, o.cases = cases, o.seed = 5, o.quiet = true;
  return o;
}

TEST(Reports, VulkanCasesRunThreeAtATimeReportWhatOneAtATimeDoes) {
  for (auto [broken, o] : {std::pair{std::string(kSkipsRaggedTail), rope_half_f32(30)}, {std::string(), sdpa_f16(24)}}) {
    const json one = cases_run(vulkan_slot(broken, 1), o, 1), three = cases_run(vulkan_slot(broken, 3), o, 3);
    EXPECT_EQ(one.size(), size_t(o.cases));
    EXPECT_EQ(one, three);
  }
}

TEST(Reports, WebGpuCasesRunTwoAtATimeReportWhatOneAtATimeDoes) {
  auto webgpu_slot = [](uint32_t workers) {
    std::vector<BackendSlot> slots(1);
    slots[0].name = "webgpu";
    slots[0].requested = true;
    slots[0].backend = WebGpuBackend::create({.workers = workers}, &slots[0].unavailable);
    return slots;
  };
  for (const CheckOptions& o : {rope_half_f32(30), sdpa_f16(24)}) {
    const json one = cases_run(webgpu_slot(1), o, 1), two = cases_run(webgpu_slot(2), o, 2);
    EXPECT_EQ(one.size(), size_t(o.cases));
    EXPECT_EQ(one, two);
  }
}

// TOUCHSTONE_CORES=16 takes a 16-core machine's paths on this one: every sweep's large and edge
// cases prepared from the start, the whole run warmed ahead, more comparing threads. The report is
// the same, case by case; the sweep's large case (rope_half's is case 16) is tallied last.
TEST(Reports, ACheckPlannedForSixteenCoresReportsWhatTheMachinesPlanDoes) {
  CheckOptions o;
  o.ops = {"rope_half", "q8ta_conv2d"}, o.cases = 20, o.seed = 1, o.quiet = true;
  auto run = [&](const char* cores) {
    if (cores) ::setenv("TOUCHSTONE_CORES", cores, 1);
    json kept = cases_run(vulkan_slot("", 1), o, 1);
    ::unsetenv("TOUCHSTONE_CORES");
    return kept;
  };
  const json mine = run(nullptr), sixteen = run("16");
  ASSERT_EQ(mine.size(), 20u * 4) << "rope_half's 3 dtypes and q8ta_conv2d's int8";
  EXPECT_EQ(mine, sixteen);
  EXPECT_EQ(mine[19][0], 16) << "the large case closes rope_half/float32: " << mine[19][1];
  EXPECT_NE(mine[19][1].get<std::string>().find("H=64,S=1025,D=256"), std::string::npos) << mine[19][1];
  EXPECT_EQ(mine[16][0], 17) << "the cases after it move up one";
}

TEST(Reports, ABrokenKernelsSweepIsReportedWhereItFails) {
  auto slots = vulkan_slot(kSkipsRaggedTail);
  ASSERT_TRUE(slots[0].backend) << slots[0].unavailable;
  const std::string dir = temp_dir("broken");
  CheckOptions o = rope_half_f32(40);
  o.json = dir + "/r.json", o.html = dir + "/r.html", o.junit = dir + "/r.xml";
  std::string out;
  ASSERT_EQ(run_captured(o, slots, &out), 1) << out;
  expect_schema_valid(o.json);
  const json rep = load(o.json);
  EXPECT_EQ(rep["state"], "complete");
  EXPECT_EQ(rep["totals"]["gate"], "fail");
  EXPECT_EQ(rep["cases"].size(), 40u);
  // Every failure is a ragged case, every ragged valid case fails, with the tail's elements unwritten.
  int64_t fewest = INT64_MAX;
  int failures = 0;
  for (const json& c : rep["cases"]) {
    const Case k = Case::parse(c["id"].get<std::string>());
    const bool ragged = k.has("D") && k.get("D") % 4 == 2;
    if (c["outcome"] == "FAIL") {
      ++failures;
      EXPECT_TRUE(ragged) << c.dump();
      EXPECT_GT(c["outputs"][0]["unwritten"].get<int64_t>(), 0);
      EXPECT_TRUE(c.contains("repro"));
      fewest = std::min(fewest, c["elements"].get<int64_t>());
    } else if (c["outcome"] == "PASS") {
      EXPECT_FALSE(ragged) << c.dump();
    }
  }
  ASSERT_GT(failures, 0);
  // The first failing line printed is the group's smallest failure (shrunk, or the smallest met).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("Failing cases[^\n]*\nFAIL +touchstone repro '([^']+)' --backend vulkan")))
      << out;
  const std::string smallest = m[1];
  const json& g = rep["groups"][0];
  ASSERT_TRUE(g.contains("smallest_failing"));
  EXPECT_EQ(g["smallest_failing"]["case"]["id"], smallest);
  EXPECT_LE(g["smallest_failing"]["case"]["elements"].get<int64_t>(), fewest);
  EXPECT_TRUE(std::regex_search(out, std::regex("(and [0-9]+ more|the sweep met [0-9]+) failing cases in rope_half/vulkan/float32"))) << out;
  EXPECT_EQ(judge(prepare(parse_case(smallest)), *slots[0].backend).outcome, Outcome::fail) << "the printed id reproduces";
  // Each drawn heatmap marks exactly the cells covering the unwritten tail d >= D/4*4.
  int maps = 0;
  std::vector<json> drawn = {g["smallest_failing"]["case"]};
  for (const json& c : rep["cases"])
    if (c["outcome"] == "FAIL" && c["outputs"][0].contains("map")) drawn.push_back(c);
  for (const json& c : drawn) {
    const json& map = c["outputs"][0]["map"];
    const Case k = Case::parse(c["id"].get<std::string>());
    const int64_t D = k.get("D"), tail = D / 4 * 4, step = map["step"][1];
    ASSERT_EQ(map["dims"], json({2, 3})) << "S x D";
    std::pair<int, int> size;
    const auto hot = hot_cells(o.html, c["id"], "vulkan", "out", &size, maps > 0);  // the page draws a few
    if (!hot) continue;
    std::set<std::pair<int, int>> want;
    for (int row = 0; row < size.first; ++row)
      for (int col = 0; col < size.second; ++col)
        if ((col + 1) * step - 1 >= tail) want.insert({row, col});
    EXPECT_EQ(*hot, want) << c["id"];
    ++maps;
  }
  EXPECT_GE(maps, 3);
  std::string py;
  EXPECT_TRUE(report_check({"html", o.html}, &py)) << py;
  EXPECT_TRUE(report_check({"html", o.junit}, &py)) << "JUnit is well-formed XML: " << py;
}

TEST(Reports, KnownFailuresAreXfailAndAListedCaseThatPassesFailsTheRun) {
  auto slots = vulkan_slot(kSkipsRaggedTail);
  ASSERT_TRUE(slots[0].backend) << slots[0].unavailable;
  const std::string dir = temp_dir("xfail");
  CheckOptions o = rope_half_f32(30);
  o.json = dir + "/r.json", o.junit = dir + "/r.xml", o.xfail = dir + "/known.txt";
  std::ofstream(o.xfail) << "rope_half/vulkan/float32   # the ragged tail is skipped (issue 0)\n";
  std::string out;
  EXPECT_EQ(run_captured(o, slots, &out), 0) << "every failure is known: " << out;
  expect_schema_valid(o.json);
  json rep = load(o.json);
  const json t = rep["groups"][0]["tally"];
  EXPECT_EQ(t["fail"], 0);
  EXPECT_GT(t["xfail"].get<int>(), 0);
  EXPECT_EQ(rep["groups"][0]["pattern_stale"], false);
  std::string passing;
  for (const json& c : rep["cases"]) {
    if (c["outcome"] == "FAIL") {
      EXPECT_EQ(c["status"], "XFAIL");
    }
    if (c["outcome"] == "PASS" && passing.empty()) passing = c["id"];
  }
  EXPECT_NE(slurp(o.junit).find("<skipped type=\"XFAIL\""), std::string::npos);
  EXPECT_NE(out.find("XFAIL"), std::string::npos) << out;

  // A case listed by id that passes is XPASS, and fails the run.
  ASSERT_FALSE(passing.empty());
  std::ofstream(o.xfail) << "# one case\n" << passing << "  # thought broken\n";
  EXPECT_EQ(run_captured(o, slots, &out), 1) << out;
  expect_schema_valid(o.json);
  rep = load(o.json);
  EXPECT_EQ(rep["groups"][0]["tally"]["xpass"], 1);
  for (const json& c : rep["cases"])
    if (c["id"] == passing) {
      EXPECT_EQ(c["status"], "XPASS");
      EXPECT_EQ(c["xfail"]["where"], o.xfail + ":2");
    }
  EXPECT_NE(out.find("XPASS             touchstone repro '" + passing + "' --backend vulkan"), std::string::npos) << out;
  EXPECT_NE(slurp(o.junit).find("<failure type=\"XPASS\""), std::string::npos);

  // A pattern over a group that passes whole is stale: XPASS.
  auto fixed = vulkan_slot();
  std::ofstream(o.xfail) << "rope_half/*/float32   # the ragged tail is skipped (issue 0)\n";
  EXPECT_EQ(run_captured(o, fixed, &out), 1) << out;
  rep = load(o.json);
  EXPECT_EQ(rep["groups"][0]["pattern_stale"], true);
  EXPECT_NE(out.find("XPASS             pattern rope_half/*/float32"), std::string::npos) << out;
  EXPECT_NE(slurp(o.junit).find("type=\"XPASS\""), std::string::npos);
}

TEST(Reports, FailFastStopsAfterTheFirstFailureAndSaysSo) {
  auto slots = vulkan_slot(kSkipsRaggedTail);
  ASSERT_TRUE(slots[0].backend) << slots[0].unavailable;
  const std::string dir = temp_dir("failfast");
  CheckOptions o = rope_half_f32(40);
  o.json = dir + "/r.json", o.junit = dir + "/r.xml";
  o.fail_fast = true;
  std::string out;
  EXPECT_EQ(run_captured(o, slots, &out), 1) << out;
  expect_schema_valid(o.json);
  const json rep = load(o.json);
  EXPECT_EQ(rep["state"], "stopped");
  EXPECT_NE(rep["stop_reason"].get<std::string>().find("--fail-fast"), std::string::npos);
  ASSERT_FALSE(rep["cases"].empty());
  EXPECT_LT(rep["cases"].size(), 40u);
  EXPECT_EQ(rep["cases"].back()["outcome"], "FAIL") << "it ran nothing after the failure";
  for (size_t i = 0; i + 1 < rep["cases"].size(); ++i) EXPECT_NE(rep["cases"][i]["outcome"], "FAIL");
  EXPECT_NE(out.find("STOPPED (--fail-fast"), std::string::npos) << out;
  EXPECT_NE(slurp(o.junit).find("type=\"STOPPED\""), std::string::npos);
}

TEST(Shrink, ADrawnFailureShrinksToASmallerOneThatReproduces) {
  auto slots = vulkan_slot(kSkipsRaggedTail);
  ASSERT_TRUE(slots[0].backend) << slots[0].unavailable;
  Backend& b = *slots[0].backend;
  Sweep sweep(*find_op("rope_half"), DType::f32, 200, 1);
  // The largest failing drawn case among the later (larger) ones.
  int64_t start = -1, start_elements = 0;
  for (int64_t k = sweep.size() - 1; k > 100 && start < 0; --k) {
    if (!sweep.draw(k) || !sweep.draw(k)->valid) continue;
    Case c = sweep.at(k);
    if (c.get("D") % 4 != 2) continue;
    Expected e = prepare(c);
    if (judge(e, b).outcome == Outcome::fail) start = k, start_elements = input_elements(e);
  }
  ASSERT_GE(start, 0) << "no failing drawn case to shrink";
  auto shrunk = shrink_failure(sweep, start, b, Outcome::fail, ShrinkBudget{}, {});
  ASSERT_TRUE(shrunk) << sweep.at(start).id();
  EXPECT_GT(shrunk->steps, 0);
  EXPECT_LT(shrunk->elements, start_elements) << shrunk->result.id;
  const Case small = Case::parse(shrunk->result.id);
  EXPECT_EQ(small.get("D") % 4, 2) << small.id();
  EXPECT_EQ(judge(prepare(small), b).outcome, Outcome::fail) << "the shrunk id reproduces: " << small.id();
  EXPECT_FALSE(shrink_failure(sweep, 0, b, Outcome::fail, ShrinkBudget{}, {})) << "edge cases are not drawn";
}

int cli(std::vector<std::string> words, std::string* err = nullptr) {
  words.insert(words.begin(), "touchstone");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = run_cli(words);
  ::testing::internal::GetCapturedStdout();
  const std::string e = ::testing::internal::GetCapturedStderr();
  if (err) *err = e;
  return rc;
}

TEST(Reports, TheSchemaRejectsWhatIsNotAReportAndReproWritesOne) {
  const std::string d = temp_dir("schema");
  std::string err;
  ASSERT_EQ(cli({"repro", "rope_half/B=1,H=2,S=3,D=6,pos=5/float16/buffer/seed=9", "--backend", "vulkan", "--json",
                 d + "/repro.json"},
                &err),
            0)
      << err;
  expect_schema_valid(d + "/repro.json");
  const json good = load(d + "/repro.json");
  ASSERT_EQ(good["cases"].size(), 1u);
  EXPECT_EQ(good["tool"]["case"], "rope_half/B=1,H=2,S=3,D=6,pos=5/float16/buffer/seed=9");
  // The validator is not vacuous: each of these breaks the schema.
  std::vector<std::function<void(json&)>> breaks = {
      [](json& j) { j.erase("cases"); },
      [](json& j) { j["cases"][0]["status"] = "MAYBE"; },
      [](json& j) { j["cases"][0]["worst"] = "infinity"; },
      [](json& j) { j["cases"][0]["outcome"] = "FAIL"; j["cases"][0]["status"] = "FAIL"; },  // a failure without its repro line
      [](json& j) { j["schema"] = "touchstone-report/2"; },
      [](json& j) { j["state"] = "interrupted"; },  // without a stop_reason
      [](json& j) { j["groups"][0]["tally"].erase("xpass"); }};
  for (size_t i = 0; i < breaks.size(); ++i) {
    json bad = good;
    breaks[i](bad);
    const std::string path = cat(d, "/bad", i, ".json");
    std::ofstream(path) << bad.dump();
    std::string out;
    EXPECT_FALSE(report_check({"schema", path, std::string(TS_SOURCE_DIR) + "/tools/report.schema.json"}, &out))
        << "break " << i << " passed the schema";
  }
}

// ---- merge ----

std::vector<std::string> small_sweep(const std::vector<std::string>& extra) {
  std::vector<std::string> w = {"check", "--op", "rope_cis,rope_half", "--dtype", "float32,float16", "--cases", "12",
                                "--seed", "5", "--backend", "vulkan", "--quiet"};
  w.insert(w.end(), extra.begin(), extra.end());
  return w;
}

std::multiset<std::string> case_keys(const json& rep) {
  std::multiset<std::string> keys;
  for (const json& c : rep["cases"])
    keys.insert(cat(c["index"].get<int64_t>(), " ", c["id"].get<std::string>(), " ", c["backend"].get<std::string>(), " ",
                    c["status"].get<std::string>()));
  return keys;
}

TEST(Merge, ShardsMergeIntoTheUnshardedReport) {
  const std::string d = temp_dir("merge");
  ASSERT_EQ(cli(small_sweep({"--json", d + "/all.json", "--junit", d + "/all.xml"})), 0);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cli(small_sweep({"--shard", cat(i, "/3"), "--json", cat(d, "/s", i, ".json")})), 0);
  std::string err;
  ASSERT_EQ(cli({"merge", d + "/m.json", d + "/s2.json", d + "/s0.json", d + "/s1.json", "--junit", d + "/m.xml", "--html",
                 d + "/m.html"},
                &err),
            0)
      << err;
  expect_schema_valid(d + "/m.json");
  const json all = load(d + "/all.json"), merged = load(d + "/m.json");
  EXPECT_EQ(case_keys(merged), case_keys(all));
  EXPECT_EQ(merged["coverage"], all["coverage"]);
  EXPECT_EQ(merged["sweep"], all["sweep"]);
  for (const char* k : {"cases", "pass", "fail", "rejected", "unsupported", "error", "mismatch"})
    EXPECT_EQ(merged["totals"][k], all["totals"][k]) << k;
  ASSERT_EQ(merged["groups"].size(), all["groups"].size());
  for (size_t i = 0; i < all["groups"].size(); ++i) {
    EXPECT_EQ(merged["groups"][i]["name"], all["groups"][i]["name"]);
    EXPECT_EQ(merged["groups"][i]["tally"]["cases"], all["groups"][i]["tally"]["cases"]);
  }
  EXPECT_EQ(merged["tool"]["command"], "merge");
  EXPECT_EQ(merged["tool"]["inputs"].size(), 3u);
  // The merged JUnit holds the same testcases as the unsharded run's.
  auto testcases = [](const std::string& xml) {
    std::multiset<std::string> out;
    std::regex tc("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tc); it != std::sregex_iterator(); ++it)
      out.insert((*it)[1].str() + " " + (*it)[2].str());
    return out;
  };
  EXPECT_EQ(testcases(slurp(d + "/m.xml")), testcases(slurp(d + "/all.xml")));
  std::string py;
  EXPECT_TRUE(report_check({"html", d + "/m.html"}, &py)) << py;
}

TEST(Merge, ShardsThatDoNotFitAreNamedAndNothingIsWritten) {
  const std::string d = temp_dir("misfit");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cli(small_sweep({"--shard", cat(i, "/3"), "--json", cat(d, "/s", i, ".json")})), 0);
  std::vector<std::string> other = {"check", "--op", "rope_cis,rope_half", "--dtype", "float32,float16", "--cases", "12",
                                    "--seed", "6", "--backend", "vulkan", "--quiet", "--shard", "1/3", "--json",
                                    d + "/seed6.json"};
  ASSERT_EQ(cli(other), 0);
  ASSERT_EQ(cli(small_sweep({"--shard", "1/2", "--json", d + "/half.json"})), 0);
  // The same shard run with --kernels (a copy of the built-in kernel: only the kernels' origin differs).
  fs::create_directories(d + "/k");
  std::ofstream(d + "/k/rope_cis.comp") << std::ifstream(std::string(TS_SOURCE_DIR) + "/gpu/vulkan/shaders/rope_cis.comp").rdbuf();
  ASSERT_EQ(cli(small_sweep({"--shard", "1/3", "--kernels", d + "/k", "--json", d + "/s1k.json"})), 0);
  std::ofstream(d + "/running.json") << R"({"schema": "touchstone-report/1", "state": "running", "note": "x"})";
  std::ofstream(d + "/junk.json") << "{not json";
  const std::string s0 = d + "/s0.json", s1 = d + "/s1.json", s2 = d + "/s2.json", out = d + "/m.json";
  for (auto [inputs, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{s0, s2}, "backend vulkan lacks shard 1/3"},
           {{s0, s1, s2, s1}, "is in both"},
           {{s0, d + "/seed6.json", s2}, "different sweeps (seed 6 vs 5)"},
           {{s0, s1, s2, d + "/half.json"}, "every shard must split the sweep into the same N"},
           {{s0, s1, d + "/running.json"}, "never finished"},
           {{s0, s1, d + "/junk.json"}, "is not valid JSON"},
           {{s0, d + "/s1k.json", s2}, "ran different kernels (--kernels)"}}) {
    std::vector<std::string> words = {"merge", out};
    words.insert(words.end(), inputs.begin(), inputs.end());
    std::string err;
    EXPECT_EQ(cli(words, &err), 2) << words.back();
    EXPECT_NE(err.find(expected), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(out)) << "nothing is written when the shards do not fit";
  }
}

TEST(Merge, AStaleKnownFailurePatternIsDecidedOverEveryShard) {
  const std::string d = temp_dir("stale");
  std::ofstream(d + "/known.txt") << "rope_cis/vulkan/float16  # suspected broken\n";
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(cli(small_sweep({"--shard", cat(i, "/2"), "--xfail", d + "/known.txt", "--json", cat(d, "/s", i, ".json")})), 0)
        << "a shard cannot tell a stale pattern";
  std::string err;
  EXPECT_EQ(cli({"merge", d + "/m.json", d + "/s0.json", d + "/s1.json"}, &err), 1) << err;
  expect_schema_valid(d + "/m.json");
  const json m = load(d + "/m.json");
  for (const json& g : m["groups"])
    EXPECT_EQ(g.contains("pattern_stale") && g["pattern_stale"] == true, g["name"] == "rope_cis/vulkan/float16") << g.dump();
  EXPECT_EQ(m["totals"]["gate"], "fail");
}

}  // namespace
}  // namespace ts
