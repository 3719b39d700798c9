// merge as the gate of a sharded CI run: it recomputes every tally and the exit status
// from the shards' cases, requires each shard to hold exactly the cases its sweep runs there, and
// reads its inputs within the golden reader's limits. Each test edits real shard reports the way a
// broken or hostile CI step could, and needs the merge to fail (exit 1) or refuse (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/contract.h"
#include "properties/generators.h"
#include "tools/commands.h"
#include "tests/test_files.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using test::slurp;

int cli(std::vector<std::string> words, std::string* out = nullptr) {
  words.insert(words.begin(), "touchstone");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = run_cli(words);
  const std::string o = ::testing::internal::GetCapturedStdout();
  const std::string e = ::testing::internal::GetCapturedStderr();
  if (out) *out = o + e;
  return rc;
}

// Three shards of one small sweep on Vulkan, run once for the suite; each test edits copies.
class MergeGate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::fresh_dir("merge", "gate");
    for (int i = 0; i < 3; ++i) {
      std::string out;
      ASSERT_EQ(cli({"check", "--op", "rope_cis,rope_half", "--dtype", "float32", "--cases", "12", "--seed", "5",
                     "--backend", "vulkan", "--quiet", "--shard", cat(i, "/3"), "--json", shard(i)},
                    &out),
                0)
          << out;
    }
  }
  static std::string shard(int i) { return cat(dir_, "/s", i, ".json"); }
  static json load(int i) { return json::parse(slurp(shard(i))); }

  // Merges shards 0 and 2 as they are with `edited` in place of shard 1.
  int merge_with(const json& edited, std::string* out) {
    const std::string path = cat(dir_, "/edited.json"), merged = cat(dir_, "/m.json");
    std::ofstream(path) << edited.dump();
    fs::remove(merged);
    return cli({"merge", merged, shard(0), path, shard(2)}, out);
  }

  static std::string dir_;
};
std::string MergeGate::dir_;

TEST_F(MergeGate, TheUneditedShardsPass) {
  std::string out;
  EXPECT_EQ(merge_with(load(1), &out), 0) << out;
  EXPECT_TRUE(contains(out, "gate PASS")) << out;
}

// A case turned into a failure fails the merge, whatever the shard's tallies, gate and statuses say.
TEST_F(MergeGate, ACaseTurnedIntoAFailureFailsTheMergeWhateverTheTalliesSay) {
  for (const char* outcome : {"FAIL", "ERROR", "MISSED_REJECT"}) {
    json s = load(1);
    ASSERT_FALSE(s["cases"].empty());
    json& c = s["cases"][0];
    c["outcome"] = outcome;  // status, group tallies and totals still say it passed
    std::string out;
    EXPECT_EQ(merge_with(s, &out), 1) << outcome << ": " << out;
    EXPECT_TRUE(contains(out, "gate FAIL")) << out;
    const json m = json::parse(slurp(cat(dir_, "/m.json")));
    EXPECT_EQ(m["totals"]["gate"], "fail");
    long long failing = m["totals"]["fail"].get<long long>() + m["totals"]["error"].get<long long>() +
                        m["totals"]["mismatch"].get<long long>();
    EXPECT_EQ(failing, 1) << outcome;
  }
  // A failing case marked XFAIL by hand, with no --xfail list that names it, is a failure.
  json s = load(1);
  s["cases"][0]["outcome"] = "FAIL";
  s["cases"][0]["status"] = "XFAIL";
  s["cases"][0]["xfail"] = {{"entry", "rope_cis/*/*"}, {"reason", "forged"}, {"where", "nowhere:1"}};
  std::string out;
  EXPECT_EQ(merge_with(s, &out), 1) << out;
}

// A shard must hold exactly the cases its sweep runs there: missing ones are counted and the first
// named; a renamed or foreign case is named.
TEST_F(MergeGate, AShardMissingCasesOrHoldingOthersIsRefused) {
  const json full = load(1);
  const size_t n = full["cases"].size();
  ASSERT_GE(n, 4u);
  json half = full;
  half["cases"] = json::array();
  for (size_t i = 0; i < n; ++i)
    if (i % 2) half["cases"].push_back(full["cases"][i]);
  std::string out;
  EXPECT_EQ(merge_with(half, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("lacks ", n - n / 2, " of the ", n, " cases"))) << out;
  EXPECT_TRUE(contains(out, cat("the first is index ", full["cases"][0]["index"].get<int64_t>(), ", ",
                                full["cases"][0]["id"].get<std::string>())))
      << out;

  json none = full;
  none["cases"] = json::array();
  EXPECT_EQ(merge_with(none, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("lacks ", n, " of the ", n, " cases"))) << out;

  json renamed = full;
  renamed["cases"][0]["id"] = "rope_cis/B=1,N=1,C=2/float32/buffer/seed=99";
  EXPECT_EQ(merge_with(renamed, &out), 2) << out;
  EXPECT_TRUE(contains(out, "where its sweep has")) << out;

  json moved = full;
  moved["cases"][0]["index"] = 100000;
  EXPECT_EQ(merge_with(moved, &out), 2) << out;
  EXPECT_TRUE(contains(out, "a position its sweep does not run")) << out;
  EXPECT_FALSE(fs::exists(cat(dir_, "/m.json"))) << "nothing is written";
}

TEST_F(MergeGate, ImpossibleShardsAndSweepsAreErrorsNotCrashes) {
  for (auto [index, count] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {3, 3}, {-1, 3}, {0, -3}, {0, 4294967296}}) {
    json s = load(1);
    s["shard"] = {{"index", index}, {"count", count}};
    std::string out;
    EXPECT_EQ(merge_with(s, &out), 2) << out;
    EXPECT_TRUE(contains(out, cat("\"shard\": {\"index\": ", index, ", \"count\": ", count, "} is no shard"))) << out;
  }
  json s = load(1);
  s["shard"]["count"] = "3";
  std::string out;
  EXPECT_EQ(merge_with(s, &out), 2) << out;
  EXPECT_TRUE(contains(out, "integers")) << out;
  // Every shard states the same impossible sweep: it cannot be drawn again.
  const std::string bad = cat(dir_, "/bad"), merged = cat(dir_, "/m.json");
  fs::create_directories(bad);
  for (int i = 0; i < 3; ++i) {
    json r = load(i);
    r["sweep"]["cases"] = 0;
    std::ofstream(cat(bad, "/s", i, ".json")) << r.dump();
  }
  EXPECT_EQ(cli({"merge", merged, bad + "/s0.json", bad + "/s1.json", bad + "/s2.json"}, &out), 2) << out;
  EXPECT_TRUE(contains(out, "states a sweep that touchstone does not draw: \"cases\" is 0")) << out;
}

// The case ids of a report are those of the generators that drew them (properties/generators.h
// kSweepVersion): shards drawn by different versions, or by a version other than merge's own, name
// other cases at the same indices, and merge refuses them naming both versions.
TEST_F(MergeGate, ReportsDrawnByAnotherVersionOfTheGeneratorsAreRefused) {
  ASSERT_EQ(load(1)["sweep"]["draw_version"], kSweepVersion);
  json other = load(1);
  other["sweep"]["draw_version"] = kSweepVersion + 1;
  std::string out;
  EXPECT_EQ(merge_with(other, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("were drawn by different generators (draw_version ", kSweepVersion + 1, " vs ", kSweepVersion, ")")))
      << out;
  json none = load(1);
  none["sweep"].erase("draw_version");
  EXPECT_EQ(merge_with(none, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("(draw_version none (a report from before versioned draws) vs ", kSweepVersion, ")"))) << out;

  // Every shard of one other version: the same sweep, but not the one this touchstone draws.
  const std::string dir = cat(dir_, "/other"), merged = cat(dir_, "/m.json");
  fs::create_directories(dir);
  for (int i = 0; i < 3; ++i) {
    json r = load(i);
    r["sweep"]["draw_version"] = kSweepVersion + 1;
    std::ofstream(cat(dir, "/s", i, ".json")) << r.dump();
  }
  EXPECT_EQ(cli({"merge", merged, dir + "/s0.json", dir + "/s1.json", dir + "/s2.json"}, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("was drawn with draw_version ", kSweepVersion + 1, " but this touchstone draws with ", kSweepVersion)))
      << out;
  EXPECT_FALSE(fs::exists(merged)) << "nothing is written";
}

// A report nested a million deep is refused by the golden reader's depth limit, not by a crash.
TEST_F(MergeGate, AReportNestedAMillionDeepIsRefusedByTheDepthLimit) {
  const std::string deep = cat(dir_, "/deep.json");
  {
    std::ofstream f(deep);
    f << "{\"schema\": \"touchstone-report/1\", \"x\": " << std::string(1000000, '[') << std::string(1000000, ']') << "}";
  }
  std::string out;
  EXPECT_EQ(cli({"merge", cat(dir_, "/m.json"), shard(0), deep, shard(2)}, &out), 2) << out;
  EXPECT_TRUE(contains(out, deep + " nests JSON deeper than 32 levels")) << out;
}

TEST_F(MergeGate, AnOutputNamingAnInputOrAnotherOutputIsAUsageError) {
  const std::string before = slurp(shard(0));
  std::string out;
  EXPECT_EQ(cli({"merge", shard(0), shard(0), shard(1), shard(2)}, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("OUT ", shard(0), " and input ", shard(0), " name the same file"))) << out;
  EXPECT_EQ(cli({"merge", cat(dir_, "/./s1.json"), shard(0), shard(1), shard(2)}, &out), 2) << out;
  EXPECT_TRUE(contains(out, "name the same file")) << out;
  const std::string m = cat(dir_, "/m.json");
  EXPECT_EQ(cli({"merge", m, shard(0), shard(1), shard(2), "--junit", m}, &out), 2) << out;
  EXPECT_TRUE(contains(out, cat("--junit ", m, " and OUT ", m, " name the same file"))) << out;
  EXPECT_EQ(cli({"merge", m, shard(0), shard(1), shard(2), "--html", shard(2)}, &out), 2) << out;
  EXPECT_EQ(slurp(shard(0)), before) << "the input is untouched";
}

}  // namespace
}  // namespace ts
