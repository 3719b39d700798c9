// sdpa impl=split (flash-decoding) beyond the generic suites, which already run its edge and drawn
// cases: over the default sweep it computes what impl=naive computes (metamorphic: each is within
// the tolerance of the exact value, so the two are within twice of each other, and they write the
// same caches), on each backend; and a combine that forgets to rescale a chunk by exp(m_j - M) is
// caught by the property, shrunk to a small case with more than one chunk, and reproduced by its id;
// the partial dispatch's grid folds past 65,535 workgroups; the decode partial's reduction is
// proven by a broken one, and a device with too small subgroups makes it UNSUPPORTED.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "core/compare.h"
#include "reference/ops.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"
#include "tests/shrink_bug.h"
#include "tools/sweep.h"

namespace ts::test {
namespace {

using SdpaSplit = BackendTest;

// The default sweep's first 120 cases of each dtype (the edge cases, the split ones among them,
// then drawn ones), less the large case: every valid one runs as split and as naive.
TEST_P(SdpaSplit, EqualsNaiveOverTheSweep) {
  for (DType t : named_op("sdpa").dtypes) {
    const Sweep sweep(named_op("sdpa"), t, 120, 1);
    int compared = 0;
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Case c = sweep.at(k);
      if (c.id() == named_op("sdpa").large_case().id()) continue;
      Expected split = prepare(Case(c).set("impl", "split")), naive = prepare(Case(c).set("impl", "naive"));
      if (!split.error.empty() || split.violation) continue;
      RunOutput a = backend().run(named_op("sdpa"), split.problem), b = backend().run(named_op("sdpa"), naive.problem);
      ASSERT_EQ(a.status, RunOutput::Status::ok) << c.id() << ": " << a.message;
      ASSERT_EQ(b.status, RunOutput::Status::ok) << c.id() << ": " << b.message;
      CompareReport rep = compare("out", a.outputs.at("out"), b.outputs.at("out").cast(DType::f64), scaled(naive.tol, 2), false);
      EXPECT_TRUE(rep.ok()) << c.id() << ": split vs naive max abs " << rep.max_abs << ", first at " << rep.first_bad;
      EXPECT_EQ(a.outputs.at("k_cache").bytes, b.outputs.at("k_cache").bytes) << c.id();
      EXPECT_EQ(a.outputs.at("v_cache").bytes, b.outputs.at("v_cache").bytes) << c.id();
      ++compared;
    }
    EXPECT_GT(compared, 60) << dtype_name(t);
  }
}

// One workgroup per (query block, chunk, kv head): 70,000 kv heads of one query each run 70,000
// partial workgroups, past 65,535 in one grid dimension, so the grid folds into y and the kernel
// counts its workgroups back (spare ones of the last row leave at once).
TEST_P(SdpaSplit, PartialGridFoldsPastMaxWorkgroups) {
  Expected e = prepare(Case::parse("sdpa/S=1,Hq=70000,Hkv=70000,D=8,pos=1,impl=split/float32/buffer/seed=5"));
  ASSERT_TRUE(e.error.empty() && !e.violation) << e.error;
  const std::vector<Dispatch> plan = named_op("sdpa").plan(e.problem);
  ASSERT_EQ(plan[0].kernel, "sdpa_decode_partial");  // one query row per kv head: decode
  ASSERT_GT(plan[0].invocations / plan[0].workgroup, 65535u);
  CaseResult r = judge(e, backend());
  EXPECT_EQ(r.outcome, Outcome::pass) << r.id << ": " << r.detail;
}

// A device whose subgroups are smaller than a kernel's shuffle groups (Dispatch::subgroup) reports
// the case UNSUPPORTED, naming both sizes, before any GPU work: no device has subgroups of 4096.
TEST_P(SdpaSplit, ShuffleGroupsPastTheDevicesSubgroupsAreUnsupported) {
  OpDef wide = named_op("sdpa");
  wide.plan = [](const Problem& p) {
    std::vector<Dispatch> plan = named_op("sdpa").plan(p);
    for (Dispatch& d : plan)
      if (d.subgroup) d.subgroup = 4096;
    return plan;
  };
  Expected e = prepare(Case::parse("sdpa/S=1,Hq=8,Hkv=2,D=64,pos=100,impl=split/float32/buffer/seed=1"));
  ASSERT_EQ(named_op("sdpa").plan(e.problem)[0].subgroup, 8u);
  RunOutput r = backend().run(wide, e.problem);
  EXPECT_EQ(r.status, RunOutput::Status::unsupported) << r.message;
  EXPECT_NE(r.message.find("shuffles within groups of 4096 invocations; the device's subgroups are"), std::string::npos)
      << r.message;
  EXPECT_EQ(r.capability, "subgroups") << "what check --expect holds a device to";
}

INSTANTIATE_TEST_SUITE_P(All, SdpaSplit, ::testing::ValuesIn(kernel_backends()), [](const auto& info) { return info.param; });

// The combine weighs every chunk as if its max were the row's: a_j = exp(m_j - m_j) = 1 instead of
// exp(m_j - M) (a_j is set to 1 right after it is computed, in add_chunk, for every chunk).
std::string combine_without_rescale(const std::string& backend) {
  return backend == "vulkan"
             ? with_bug("gpu/vulkan/shaders/sdpa_split_combine.comp", "float a = exp(ml.x - M);", "  a = 1.0;", true)
             : with_bug("gpu/webgpu/shaders/sdpa_split_combine.wgsl", "var a = exp(ml.x - M);", "  a = 1.0;", true);
}

class SdpaSplitBug : public ::testing::TestWithParam<std::string> {};

TEST_P(SdpaSplitBug, CombineWithoutRescaleIsCaughtShrunkAndReproduced) {
  std::string why;
  std::unique_ptr<Backend> b = backend_with_kernel(GetParam(), "sdpa_split_combine", combine_without_rescale(GetParam()), &why);
  if (!b) {
    if (missing_allowed(GetParam())) GTEST_SKIP() << GetParam() << " UNAVAILABLE: " << why;
    FAIL() << GetParam() << " UNAVAILABLE: " << why;
  }
  const rc::Gen<Case> split = rc::gen::map(gen_sdpa(named_op("sdpa"), DType::f32, true), [](Case c) { return c.set("impl", "split"); });
  // RapidCheck's seed 5, not shrunk_failure's 42: whether the first failure RapidCheck meets is a
  // long context (pos >= 1000, which no shrink takes under 1,000 keys) or a short one is the seed's
  // luck. Over RapidCheck seeds 1..16 the shrink ends within the bounds below for 6 (5 the first)
  // with the draws of properties/draw.h, and for 2 with the RapidCheck draws before them (42 was
  // one). (The other shrink tests, on Vulkan, pass with each of the seeds 1..12.)
  const std::string id = shrunk_failure(*b, split, "", 5);
  ASSERT_FALSE(id.empty()) << "the missing rescale was not caught";
  const Case shrunk = Case::parse(id);
  // Only a query that sees two chunks can show it: past 32 keys (the split partial's chunk) at the
  // least, and no further than 65 (decode at the decode partial's shortest chunk, 64): the shrink
  // stops at one of the two. The smallest head dim: the bug needs no more.
  EXPECT_GT(shrunk.get("pos") + shrunk.get("S"), 32) << id;
  EXPECT_LE(shrunk.get("pos") + shrunk.get("S"), 65) << id;
  EXPECT_EQ(shrunk.get("D"), 4) << id;
  expect_reproduces(id, *b);
  std::string why2;
  std::unique_ptr<Backend> good = open_backend(GetParam(), {}, &why2);
  ASSERT_TRUE(good) << why2;
  EXPECT_EQ(judge(prepare(shrunk), *good).outcome, Outcome::pass) << "the shipped kernels pass the shrunk case";
}

INSTANTIATE_TEST_SUITE_P(All, SdpaSplitBug, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

// The decode partial with one line spliced in (before the line holding `anchor`, GLSL / WGSL) must
// FAIL `c` on this test's backend, where the shipped kernel PASSes it.
void expect_decode_bug_fails(const std::string& backend, const std::string& anchor_vk, const std::string& bug_vk,
                             const std::string& anchor_wgsl, const std::string& bug_wgsl, const Case& c) {
  const bool vk = backend == "vulkan";
  const std::string src = vk ? with_bug("gpu/vulkan/shaders/sdpa_decode_partial.comp", anchor_vk, bug_vk, false)
                             : with_bug("gpu/webgpu/shaders/sdpa_decode_partial.wgsl", anchor_wgsl, bug_wgsl, false);
  std::string why;
  std::unique_ptr<Backend> b = backend_with_kernel(backend, "sdpa_decode_partial", src, &why);
  if (!b) {
    if (missing_allowed(backend)) GTEST_SKIP() << backend << " UNAVAILABLE: " << why;
    FAIL() << backend << " UNAVAILABLE: " << why;
  }
  ASSERT_EQ(named_op("sdpa").plan(prepare(c).problem)[0].kernel, "sdpa_decode_partial");
  EXPECT_EQ(judge(prepare(c), *b).outcome, Outcome::fail) << c.id();
  std::unique_ptr<Backend> good = open_backend(backend, {}, &why);
  ASSERT_TRUE(good) << why;
  EXPECT_EQ(judge(prepare(c), *good).outcome, Outcome::pass) << c.id();
}

// The decode partial's lane group reduces its partial dot products across 8 invocations; one that
// leaves out invocations 4..7 (texels 4..7, 12..15, ... of each key) scores every cached key wrong.
TEST_P(SdpaSplitBug, DecodeReductionOverHalfTheLanesFails) {
  expect_decode_bug_fails(GetParam(), "h4[x] = keep(", "    if ((t & 4u) != 0u) for (uint x = 0u; x < 8u; ++x) acc[x] = 0.0;",
                          "h4[x] = keep(", "    if ((t & 4u) != 0u) { for (var x = 0u; x < 8u; x++) { acc[x] = 0.0; } }",
                          Case::parse("sdpa/S=1,Hq=8,Hkv=2,D=64,pos=100,impl=split/float32/buffer/seed=1"));
}

// The chunk softmax's sum combines each run of 8 invocations by shuffles before part 0 adds the runs
// 8 apart; a run_sum whose runs are 4 (its LG shadowed) stops after partners t ^ 1 and t ^ 2 and
// loses parts 4..7 of every run, so each chunk's l is about half what it is.
TEST_P(SdpaSplitBug, DecodeSoftmaxSumOverHalfARunFails) {
  expect_decode_bug_fails(GetParam(), "x += subgroupShuffleXor(x, b)",
                          "  const uint LG = 4u;", "y += subgroupShuffleXor(y, b)", "  let LG = 4u;",
                          Case::parse("sdpa/S=1,Hq=8,Hkv=2,D=64,pos=100,impl=split/float32/buffer/seed=1"));
}

}  // namespace
}  // namespace ts::test
