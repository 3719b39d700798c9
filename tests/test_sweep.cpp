// The sweep is one deterministic sequence: the same (op, dtype, count, seed) gives the same case
// ids (pinned: they are a contract), case k is the same whichever order the cases are asked for
// (they are made on demand), and `check --shard i/n` splits it with no overlap and no gap (the
// shards' JUnit files together hold exactly the unsharded run's cases).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include <rapidcheck.h>

#include "gpu/plans/registry.h"
#include "properties/draw.h"
#include "properties/generators.h"
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
    // More cases than any operator has edge cases (sdpa's float16: 62), so that some are drawn.
    auto a = ids(Sweep(*op, DType::f16, 80, 7)), b = ids(Sweep(*op, DType::f16, 80, 7));
    EXPECT_EQ(a, b) << op->name;
    EXPECT_NE(a, ids(Sweep(*op, DType::f16, 80, 8))) << op->name;
    // Made on demand: asking in reverse order gives the same case k.
    Sweep s(*op, DType::f16, 80, 7);
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

// The sweep's contract: drawn case r of these (op, dtype, seed) is exactly this id, on any machine,
// with any RapidCheck version (properties/draw.h). Old ids in CI logs and --xfail files name sweep
// cases, so a change here must be deliberate: a change of the generators, of their draws or of the
// sweep's keys that changes these ids bumps kSweepVersion (properties/generators.h), and the ids
// below are then written anew. r counts from the first drawn case (index = edge cases + r), and the
// sweep holds 101 drawn cases, so that case r is drawn at size r whatever the edge cases number.
TEST(Sweep, DrawnIdsAreTheContract) {
  struct Pinned {
    const char* op;
    DType dtype;
    uint64_t seed;
    int64_t r;
    const char* id;
  };
  static_assert(kSweepVersion == 2, "the draws changed: write the ids below anew");
  const Pinned pinned[] = {
      {"rope_llama", DType::f16, 1, 0,
       "rope_llama/B=1,S=1,Hq=4,Hkv=1,D=2,pos=1000,tables=random/float16/texture3d_w/seed=0"},
      {"rope_llama", DType::f32, 1, 4,
       "rope_llama/B=1,S=2,Hq=3,Hkv=1,D=4,pos=1,tables=random,Dk=6/float32/buffer;freqs_cos=texture3d_h/seed=37105932"},
      {"rope_cis", DType::f32, 3, 57,
       "rope_cis/B=2,N=5,C=22,fshape=1_n_c2_2,pos=20,tables=random/float32/buffer;freqs_cis=texture3d_h/seed=378608144"},
      {"rope_half", DType::bf16, 1, 99,
       "rope_half/B=2,H=7,S=16,D=42,pos=58,Sc=60/bfloat16/texture3d_h;cos=buffer;sin=buffer/seed=1195651086"},
      {"rope_matrix", DType::f16, 42, 100,
       "rope_matrix/B=2,H=1,S=5,D=255,mode=dense,pos=30/float16/buffer/seed=1502701596"},
      {"sdpa", DType::f32, 1, 14,
       "sdpa/S=1,Hq=2,Hkv=1,D=64,pos=10,impl=tiled,Cmax=11,scale_milli=92,Hc=2/float32/buffer;out=texture3d_w;q=texture3d_w/seed=123794934"},
      {"sdpa", DType::f16, 7, 80,
       "sdpa/S=1,Hq=1,Hkv=1,D=20,pos=0,impl=split,Cmax=6,scale_milli=959/float16/texture3d_h;k_cache=buffer;out=texture3d_w;v_cache=buffer/seed=764636343"},
      {"q8ta_linear", DType::i8, 1, 33,
       "q8ta_linear/M=2,K=2,N=5,impl=auto,x_zp=-128,scales=near,range=2/int8/buffer;x=int8_4w4c/seed=501803739"},
      {"q8ta_add", DType::i8, 1, 44,
       "q8ta_add/shape=2:4,b_zp=127,scales=decimal,out_zp=377/int8/int8_4w4c/seed=674437842"},
      {"q8ta_conv2d", DType::i8, 1, 70,
       "q8ta_conv2d/C_in=4,C_out=4,H=6,W=7,KH=1,KW=3,groups=2,ph=1,impl=auto,bias=no,x_zp=-71,scales=decimal,range=39,out_shift=5,out_zp=127/int8/buffer;out=int8_4w4c;x=int8_4c1w/seed=276939614"},
      {"q8ta_conv2d", DType::i8, 18446744073709551615ull, 9,
       "q8ta_conv2d/C_in=3,C_out=3,H=1,W=7,KH=1,KW=7,N=2,impl=general,bias=no,x_zp=-965,scales=near,out_shift=-6/int8/buffer;out=int8_4w4c;x=int8_4c1w/seed=39904202"},
  };
  for (const Pinned& p : pinned) {
    const int64_t edges = Sweep(*find_op(p.op), p.dtype, kDefaultCases, p.seed).edges();
    const Sweep sweep(*find_op(p.op), p.dtype, edges + 101, p.seed);
    const int64_t k = edges + p.r;
    EXPECT_EQ(sweep.draw(k)->size, p.r);
    EXPECT_EQ(sweep.at(k).id(), p.id) << p.op << " " << dtype_name(p.dtype) << " seed " << p.seed << " drawn case " << p.r;
    EXPECT_EQ(sweep.draw(k)->valid, p.r % 5 != 4);
  }
}

// A drawn case is a function of its key and size: drawing it again gives it again, whatever
// RapidCheck random state the generator is handed, and re-evaluating the value (RapidCheck re-runs
// the generator each time) gives the same case.
TEST(Sweep, ADrawDependsOnItsKeyAndSizeAlone) {
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes)
      for (uint64_t key : {uint64_t(1), uint64_t(0xfeed), ~uint64_t(0)})
        for (int size : {0, 37, 100})
          for (bool valid : {true, false}) {
            const std::string id = draw_case(*op, t, valid, key, size).id();
            EXPECT_EQ(draw_case(*op, t, valid, key, size).id(), id);
            const rc::Shrinkable<Case> s = draw_shrinkable(*op, t, Draw{valid, key, size});
            EXPECT_EQ(s.value().id(), id);
            EXPECT_EQ(s.value().id(), id);
            for (uint64_t other : {uint64_t(7), uint64_t(1) << 40}) {
              const draw::Keyed keyed(key);
              EXPECT_EQ(op->generator(*op, t, valid)(rc::Random(other), size).value().id(), id) << op->name;
            }
          }
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
