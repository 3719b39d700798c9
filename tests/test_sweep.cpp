// The sweep is one deterministic sequence: the same (op, dtype, count, seed) gives the same case
// ids, case k is the same whichever order the cases are asked for (they are made on demand), and
// `check --shard i/n` splits it with no overlap and no gap (the shards' JUnit files together hold
// exactly the unsharded run's cases).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "gpu/plans/registry.h"
#include "tools/commands.h"
#include "tools/sweep.h"

namespace ts {
namespace {

std::vector<std::string> ids(const Sweep& s) {
  std::vector<std::string> out;
  for (int64_t k = 0; k < s.size(); ++k) out.push_back(s.at(k).id());
  return out;
}

TEST(Sweep, SameSeedSameCasesOtherSeedOtherCases) {
  for (const OpDef* op : all_ops()) {
    auto a = ids(Sweep(*op, DType::f16, 60, 7)), b = ids(Sweep(*op, DType::f16, 60, 7));
    EXPECT_EQ(a, b) << op->name;
    EXPECT_NE(a, ids(Sweep(*op, DType::f16, 60, 8))) << op->name;
    // Made on demand: asking in reverse order gives the same case k.
    Sweep s(*op, DType::f16, 60, 7);
    for (int64_t k = s.size() - 1; k >= 0; --k) EXPECT_EQ(s.at(k).id(), a[size_t(k)]) << op->name << " case " << k;
    // The hand-picked edge cases come first.
    std::vector<std::string> edges;
    for (auto& c : op->edge_cases(DType::f16)) edges.push_back(c.id());
    ASSERT_LE(edges.size(), a.size());
    EXPECT_TRUE(std::equal(edges.begin(), edges.end(), a.begin())) << op->name;
  }
}

std::multiset<std::string> junit_cases(const std::string& path) {
  std::ifstream f(path);
  std::string xml((std::istreambuf_iterator<char>(f)), {});
  std::multiset<std::string> out;
  std::regex tc("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tc); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str() + " " + (*it)[2].str());
  return out;
}

TEST(Sweep, TenMillionCasesCostNothingUntilAsked) {
  // The last case of the largest sweep is made as cheaply as the first: nothing is built ahead.
  Sweep s(*find_op("rope_cis"), DType::f32, 10'000'000, 1);
  EXPECT_EQ(s.size(), 10'000'000);
  EXPECT_EQ(s.at(s.size() - 1).id(), Sweep(*find_op("rope_cis"), DType::f32, 10'000'000, 1).at(s.size() - 1).id());
  EXPECT_THROW(s.at(s.size()), std::out_of_range);
}

int run_check(std::vector<std::string> words) { return run_cli(std::move(words)); }

TEST(Sweep, ShardsPartitionTheSweep) {
  const std::string dir = ::testing::TempDir();
  std::vector<std::string> base = {"touchstone", "check", "--op", "rope_cis,rope_half", "--cases", "25",
                                   "--backend", "vulkan", "--quiet", "--seed", "11"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> w = base;
    w.insert(w.end(), extra.begin(), extra.end());
    return w;
  };
  ASSERT_EQ(run_check(with({"--junit", dir + "/all.xml"})), 0);
  std::multiset<std::string> all = junit_cases(dir + "/all.xml"), joined;
  ASSERT_EQ(all.size(), 2u * 3u * 25u);  // 2 ops x 3 dtypes x 25 cases
  for (int i = 0; i < 3; ++i) {
    std::string file = dir + "/shard" + std::to_string(i) + ".xml";
    ASSERT_EQ(run_check(with({"--shard", std::to_string(i) + "/3", "--junit", file})), 0);
    auto part = junit_cases(file);
    EXPECT_FALSE(part.empty());
    joined.insert(part.begin(), part.end());
  }
  EXPECT_EQ(joined, all);  // a multiset: a case in two shards would appear twice
}

}  // namespace
}  // namespace ts
