// The safety nets proven against kernels that are wrong on purpose (they exist only here):
// poison catches a kernel that skips its ragged tail, guard bands catch one that writes past the
// end, both also on scratch buffers (naming the scratch tensor, not the output it spoils), and a
// property over such a kernel fails, shrinks to the smallest ragged case, and prints a case id that
// reproduces the failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>

#include "core/registry.h"
#include "core/runner.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "reference/ops.h"
#include "tests/kernel_bugs.h"

namespace ts {
namespace {

const char* kRopeHalf = "gpu/vulkan/shaders/rope_half.comp";
// Only whole 4-wide texels of each row are handled: the D%4==2 tail is never written.
const std::string kSkipsRaggedTail = test::with_bug(kRopeHalf, "out_[i] =", "  if (d >= (pc.D / 4) * 4) return;", false);
// The last invocation also writes one element past the end of the output.
const std::string kWritesPastEnd =
    test::with_bug(kRopeHalf, "out_[i] =", "  if (i == pc.n - 1) out_[i + 1] = DTYPE(0.0);", true);

const char* kSdpaQk = "gpu/vulkan/shaders/sdpa_qk_tiled.comp";
// The last score column (key ctx-1) of every row is never stored: the softmax then reads poison.
const std::string kSkipsLastScoreColumn =
    test::with_bug(kSdpaQk, "uint c = c0 + j;", "      if (c == pc.ctx - 1) continue;", true);
// The last invocation also writes one score past the end of the scores.
const std::string kScoresPastEnd =
    test::with_bug(kSdpaQk, "scores[row + c] =", "      if (id == pc.n - 1) scores[pc.Hq * pc.S * pc.ctx] = 0.0;", true);

std::unique_ptr<VulkanBackend> broken_backend(const std::string& source, const std::string& kernel = "rope_half") {
  std::string why;
  auto b = VulkanBackend::create({}, &why);
  if (b) b->set_kernel_source(kernel, source);
  return b;
}

TEST(BrokenKernels, PoisonCatchesASkippedRaggedTail) {
  auto b = broken_backend(kSkipsRaggedTail);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  CaseResult ok = judge(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=8/float32/buffer/seed=1")), *b);
  EXPECT_EQ(ok.outcome, Outcome::pass) << ok.detail;  // no tail when D % 4 == 0
  CaseResult r = judge(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=6/float32/buffer/seed=1")), *b);
  ASSERT_EQ(r.outcome, Outcome::fail);
  ASSERT_EQ(r.reports.size(), 1u);
  EXPECT_EQ(r.reports[0].unwritten, 2 * 3 * 2);  // 2 tail elements in each of the 6 rows
  EXPECT_NE(r.detail.find("never written"), std::string::npos) << r.detail;
}

TEST(BrokenKernels, GuardBandsCatchAWritePastTheEnd) {
  auto b = broken_backend(kWritesPastEnd);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  for (const char* id : {"rope_half/B=1,H=1,S=2,D=4/float32/buffer/seed=2", "rope_half/B=1,H=1,S=3,D=6/float16/buffer/seed=2"}) {
    CaseResult r = judge(prepare(Case::parse(id)), *b);
    ASSERT_EQ(r.outcome, Outcome::fail) << id;
    EXPECT_GT(r.guards.at("out").bad_bytes, 0) << id;
    EXPECT_GE(r.guards.at("out").first_offset, 0) << id;
    EXPECT_NE(r.detail.find("past the end"), std::string::npos) << r.detail;
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_TRUE(r.reports[0].ok()) << "every in-bounds value is right: only the guard shows the bug";
  }
}

// sdpa's scores are scratch: never compared with a reference, yet poisoned and checked right after
// the QK kernel (the first to bind them). An unwritten column is reported on `scores`, with its
// count and place, before whatever the output shows.
TEST(BrokenKernels, ScratchPoisonNamesTheUnwrittenScores) {
  auto b = broken_backend(kSkipsLastScoreColumn, "sdpa_qk_tiled");
  ASSERT_TRUE(b) << "Vulkan unavailable";
  // Hq=2, S=3, ctx = pos + S = 8: scores [2,3,8], one unwritten element in each of the 6 rows.
  for (const char* dtype : {"float32", "float16"}) {
    const std::string id = cat("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5/", dtype, "/buffer/seed=1");
    CaseResult r = judge(prepare(Case::parse(id)), *b);
    if (r.outcome == Outcome::unsupported) continue;  // a device without float16
    ASSERT_EQ(r.outcome, Outcome::fail) << id;
    EXPECT_EQ(r.detail.rfind("scores: 6 of 48 elements never written by sdpa_qk_tiled", 0), 0u)
        << "the scratch tensor first, with the kernel that should have written it: " << r.detail;
    EXPECT_NE(r.detail.find("first at [0,0,7]"), std::string::npos) << r.detail;
    EXPECT_EQ(r.guards.at("scores").bad_bytes, 0) << r.detail;
    EXPECT_EQ(r.detail.find("(6 never written)"), std::string::npos) << "out is not blamed: " << r.detail;
    std::cout << "[ verdict  ] " << outcome_name(r.outcome) << " " << id << ": " << r.detail << "\n";
  }
  // The naive kernel is not broken: the same case passes through it.
  CaseResult naive = judge(prepare(Case::parse("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5,impl=naive/float32/buffer/seed=1")), *b);
  EXPECT_EQ(naive.outcome, Outcome::pass) << naive.detail;
}

TEST(BrokenKernels, ScratchGuardBandsCatchAWritePastTheScores) {
  auto b = broken_backend(kScoresPastEnd, "sdpa_qk_tiled");
  ASSERT_TRUE(b) << "Vulkan unavailable";
  CaseResult r = judge(prepare(Case::parse("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5/float32/buffer/seed=1")), *b);
  ASSERT_EQ(r.outcome, Outcome::fail) << r.detail;
  EXPECT_EQ(r.guards.at("scores").bad_bytes, 4) << r.detail;  // one float32
  EXPECT_EQ(r.guards.at("scores").first_offset, 2 * 3 * 8 * 4) << r.detail;
  EXPECT_NE(r.detail.find("scores: 4 guard bytes overwritten"), std::string::npos) << r.detail;
  for (const CompareReport& rep : r.reports) EXPECT_TRUE(rep.ok()) << "outputs are right: only the guard shows it";
}

// The whole loop of issue 4: property fails -> RapidCheck shrinks -> the printed id reproduces.
TEST(BrokenKernels, PropertyShrinksToTheSmallestRaggedCaseAndItsIdReproduces) {
  auto b = broken_backend(kSkipsRaggedTail);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  std::string last_failing;
  auto property = [&] {
    Case c = *gen_rope_half(DType::f32, true);
    CaseResult r = judge(prepare(c), *b);
    if (r.outcome != Outcome::pass) last_failing = c.id();
    RC_LOG() << "touchstone repro '" << c.id() << "' --backend vulkan\n";
    RC_ASSERT(r.outcome == Outcome::pass);
  };
  rc::detail::TestParams params;
  params.seed = 42;
  params.maxSuccess = 200;
  rc::detail::TestResult result = rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params);
  rc::detail::FailureResult failure;
  ASSERT_TRUE(result.match(failure)) << "the broken kernel was not caught";
  // The last failing run of the shrink is the minimal counterexample.
  Case shrunk = Case::parse(last_failing);
  EXPECT_EQ(shrunk.get("D"), 2) << last_failing;  // the smallest D with D % 4 == 2
  EXPECT_EQ(shrunk.get("B"), 1) << last_failing;
  EXPECT_EQ(shrunk.get("H"), 1) << last_failing;
  EXPECT_EQ(shrunk.get("S"), 1) << last_failing;
  EXPECT_EQ(shrunk.seed, 0u) << last_failing;
  // The printed id reproduces: same failure from the id alone, same output bytes twice.
  CaseResult again = judge(prepare(Case::parse(last_failing)), *b);
  CaseResult third = judge(prepare(Case::parse(last_failing)), *b);
  EXPECT_EQ(again.outcome, Outcome::fail);
  EXPECT_EQ(again.digests, third.digests);
  std::cout << "shrunk to: touchstone repro '" << last_failing << "' --backend vulkan\n";
}

}  // namespace
}  // namespace ts
