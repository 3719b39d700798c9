// sdpa beyond what the generic suites already run (test_backend_ops and test_properties cover its
// edge and drawn cases): the reference by hand, a stable softmax at logits past float32's exp range,
// naive vs tiled kernels on each backend, the causal tile skip bit for bit, a grid folded past 65,535
// workgroups, and every rule rejected before anything is allocated. SdpaTiming.DISABLED_DecodeAndPrefill prints
// kernel timings and asserts none (--gtest_also_run_disabled_tests runs it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "reference/ops.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"

namespace ts::test {
namespace {

Tensor f32(Shape s, std::vector<double> v) {
  Tensor t(DType::f32, std::move(s));
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

Case with_impl(const std::string& id, const char* impl) { return Case::parse(id).set("impl", impl); }

// The largest scaled score over unmasked (query, key) pairs, from the inputs and the updated cache.
double max_score(const Problem& p, const Tensor& k_cache) {
  const Tensor& q = p.inputs.at("q");
  const int64_t S = q.shape[1], Hq = q.shape[2], D = q.shape[3], Hkv = k_cache.shape[2];
  const int64_t pos = p.params.at("input_pos").get<int64_t>();
  double m = -INFINITY;
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t c = 0; c <= pos + s; ++c) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += q.get((s * Hq + h) * D + d) * k_cache.get((c * Hkv + h / (Hq / Hkv)) * D + d);
        m = std::max(m, dot / std::sqrt(double(D)));
      }
  return m;
}

TEST(SdpaReference, ByHand) {
  // S=1, D=4, input_pos=1: ctx 2. Key 0 is cache row 0, key 1 the new k; scale 1/sqrt(4) = 1/2.
  // Scores: 0.5*dot([2,0,0,0],[1,0,0,0]) = 1 and 0.5*dot([2,0,0,0],[0,1,0,0]) = 0, so the weights
  // are e/(1+e) and 1/(1+e). Cache row 2 is stale (past ctx) and huge: reading it would show.
  Problem p;
  p.inputs = {{"q", f32({1, 1, 1, 4}, {2, 0, 0, 0})},
              {"k", f32({1, 1, 1, 4}, {0, 1, 0, 0})},
              {"v", f32({1, 1, 1, 4}, {5, 6, 7, 8})},
              {"k_cache", f32({1, 3, 1, 4}, {1, 0, 0, 0, -9, -9, -9, -9, 1000, 1000, 1000, 1000})},
              {"v_cache", f32({1, 3, 1, 4}, {1, 2, 3, 4, -9, -9, -9, -9, 1000, 1000, 1000, 1000})}};
  p.params["input_pos"] = 1;
  ASSERT_FALSE(named_op("sdpa").validate(p));
  Tensors out = named_op("sdpa").reference(p);
  const double e = std::exp(1.0), p0 = e / (1 + e), p1 = 1 / (1 + e);
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(out.at("out").get(d), p0 * (1 + d) + p1 * (5 + d), 1e-15) << d;
  const std::vector<double> kc = {1, 0, 0, 0, 0, 1, 0, 0, 1000, 1000, 1000, 1000};
  const std::vector<double> vc = {1, 2, 3, 4, 5, 6, 7, 8, 1000, 1000, 1000, 1000};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(out.at("k_cache").get(i), kc[size_t(i)]) << i;
    EXPECT_EQ(out.at("v_cache").get(i), vc[size_t(i)]) << i;
  }
  EXPECT_EQ(out.at("k_cache").dtype, DType::f32);  // an exact copy in the case dtype, not float64

  // An explicit scale replaces 1/sqrt(D): scale 2 gives scores 4 and 0.
  p.params["scale"] = 2.0;
  const double e4 = std::exp(4.0);
  EXPECT_NEAR(named_op("sdpa").reference(p).at("out").get(0), e4 / (1 + e4) * 1 + 1 / (1 + e4) * 5, 1e-15);
}

// The large-logit edge case really has scores where float32 exp() overflows, and the reference
// (stable softmax) stays finite there; the backends run it in SdpaBackend.NaiveAndTiledAgree.
constexpr const char* kLargeLogits = "sdpa/S=4,Hq=2,Hkv=1,D=8,pos=12,impl=tiled,logit_scale=300/float32/buffer/seed=1";

// A golden file's params can hold any integer: input_pos + S once overflowed in validate, which
// then passed and let the reference write out of bounds. Now the capacity rule fires, on every
// backend alike, with no arithmetic that can overflow.
TEST(SdpaReference, HugeInputPosFromAGoldenIsRejectedByTheCapacityRule) {
  for (int64_t S : {1, 2}) {
    Problem p = named_op("sdpa").make(Case::parse(cat("sdpa/S=", S, ",Hq=1,Hkv=1,D=4,pos=0,Cmax=8/float32/buffer/seed=1")));
    p.params["input_pos"] = std::numeric_limits<int64_t>::max();
    auto v = named_op("sdpa").validate(p);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "cache_capacity") << v->message;
  }
}

TEST(SdpaReference, StableSoftmaxPastFloat32ExpRange) {
  Expected e = prepare(Case::parse(kLargeLogits));
  ASSERT_TRUE(e.error.empty() && !e.violation) << e.error;
  const double m = max_score(e.problem, e.outputs.at("k_cache"));
  EXPECT_GT(m, 80);
  EXPECT_TRUE(std::isinf(std::exp(float(m)))) << "max score " << m << ": an unstable float32 softmax would overflow";
  const Tensor& out = e.outputs.at("out");
  for (int64_t i = 0; i < out.numel(); ++i) ASSERT_TRUE(std::isfinite(out.get(i))) << i;
}

using SdpaBackend = BackendTest;

// Both implementations pass against the reference, write identical caches, and agree with each
// other: each is within the tolerance of the exact value, so they are within twice of each other.
TEST_P(SdpaBackend, NaiveAndTiledAgree) {
  const char* ids[] = {
      "sdpa/S=1,Hq=12,Hkv=4,D=32,pos=20/float32/buffer/seed=11",   // decode, GQA 3:1, ctx 21
      "sdpa/S=13,Hq=8,Hkv=2,D=16,pos=9/float32/buffer/seed=12",    // chunked prefill, ctx 22
      "sdpa/S=6,Hq=5,Hkv=5,D=4,pos=0/float32/buffer/seed=13",      // prefill from 0, ctx 6
      kLargeLogits,
  };
  for (const char* id : ids)
    for (DType t : {DType::f32, DType::f16}) {
      Case base = Case::parse(id);
      base.dtype = t;
      Tensors got[2];
      Tolerance tol;
      int k = 0;
      for (const char* impl : {"naive", "tiled"}) {
        Expected e = prepare(Case(base).set("impl", impl));
        CaseResult r = judge(e, backend());
        EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
        RunOutput out = backend().run(named_op("sdpa"), e.problem);
        ASSERT_EQ(out.status, RunOutput::Status::ok) << out.message;
        got[k++] = std::move(out.outputs);
        tol = e.tol;  // the same data for both impls
      }
      CompareReport rep = compare("out", got[1].at("out"), got[0].at("out").cast(DType::f64),
                                  scaled(tol, 2), false);
      EXPECT_TRUE(rep.ok()) << id << " " << dtype_name(t) << ": naive vs tiled max abs " << rep.max_abs;
      EXPECT_EQ(got[0].at("k_cache").bytes, got[1].at("k_cache").bytes) << id;
      EXPECT_EQ(got[0].at("v_cache").bytes, got[1].at("v_cache").bytes) << id;
    }
}

// The tiled QK plan with the causal skip turned off (the only difference: SKIP_MASKED_TILES=0).
std::vector<Dispatch> plan_without_skip(const Problem& p) {
  std::vector<Dispatch> plan = named_op("sdpa").plan(p);
  for (Dispatch& d : plan)
    for (std::string& def : d.defines)
      if (def == "SKIP_MASKED_TILES=1") def = "SKIP_MASKED_TILES=0";
  return plan;
}

TEST_P(SdpaBackend, CausalTileSkipIsBitIdentical) {
  OpDef no_skip = named_op("sdpa");
  no_skip.plan = plan_without_skip;
  for (DType t : {DType::f32, DType::f16}) {
    // Prefill of 32 queries at input_pos 3: ctx 35 (a ragged last tile), most tiles above the diagonal.
    Case c = Case::parse("sdpa/S=32,Hq=4,Hkv=2,D=16,pos=3,impl=tiled/float32/buffer/seed=21");
    c.dtype = t;
    const Problem p = named_op("sdpa").make(c);
    int skipped = 0;
    for (int64_t s0 = 0; s0 < 32; s0 += 4)
      for (int64_t c0 = 0; c0 < 35; c0 += 4) skipped += c0 > 3 + s0 + 3;
    ASSERT_GT(skipped, 0);
    const std::vector<Dispatch> with = named_op("sdpa").plan(p), without = no_skip.plan(p);
    ASSERT_NE(with[1].defines, without[1].defines) << "the plan no longer has SKIP_MASKED_TILES";
    RunOutput a = backend().run(named_op("sdpa"), p), b = backend().run(no_skip, p);
    ASSERT_EQ(a.status, RunOutput::Status::ok) << a.message;
    ASSERT_EQ(b.status, RunOutput::Status::ok) << b.message;
    EXPECT_EQ(a.outputs.at("out").bytes, b.outputs.at("out").bytes) << dtype_name(t);
    EXPECT_EQ(judge(prepare(c), backend()).outcome, Outcome::pass);
  }
}

// Naive QK has one invocation per score: 16 heads x 520 x 520 = 4,326,400, over 65,535 workgroups
// of 64 in one dimension, so the backend folds the grid into y and the kernel unfolds it.
TEST_P(SdpaBackend, LongPrefillFoldsItsGrid) {
  const Case c = Case::parse("sdpa/S=520,Hq=16,Hkv=4,D=4,pos=0,impl=naive/float32/buffer/seed=31");
  Expected e = prepare(c);
  uint64_t most = 0;
  for (const Dispatch& d : named_op("sdpa").plan(e.problem)) most = std::max(most, d.invocations);
  ASSERT_GT(most, 65535ull * 64);
  CaseResult r = judge(e, backend());
  EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
}

// Every rule, broken on its own (input_rank by reshaping q, as no case var can), is rejected with
// the reference's rule id before the backend allocates or dispatches anything.
TEST_P(SdpaBackend, EveryRuleRejectedBeforeAnything) {
  for (DType t : {DType::f32, DType::f16}) {
    std::vector<std::pair<std::string, Problem>> invalid;
    Case valid = Case::parse("sdpa/S=2,Hq=2,Hkv=1,D=4,pos=1/float32/buffer/seed=1");
    valid.dtype = t;
    Problem ranked = named_op("sdpa").make(valid);
    ranked.inputs.at("q").shape = {2, 2, 4};
    invalid.emplace_back("input_rank", ranked);
    for (const Case& c : named_op("sdpa").edge_cases(t)) {
      Problem p = named_op("sdpa").make(c);
      if (auto v = named_op("sdpa").validate(p)) invalid.emplace_back(v->rule, std::move(p));
    }
    for (const Rule& rule : named_op("sdpa").rules) {
      auto it = std::find_if(invalid.begin(), invalid.end(), [&](auto& x) { return x.first == rule.id; });
      ASSERT_NE(it, invalid.end()) << "no invalid case breaks " << rule.id;
    }
    for (auto& [rule, p] : invalid) {
      const uint64_t allocs = backend().allocations, dispatches = backend().dispatches;
      RunOutput out = backend().run(named_op("sdpa"), p);
      EXPECT_EQ(out.status, RunOutput::Status::rejected) << rule;
      EXPECT_EQ(out.violation.rule, rule);
      EXPECT_NE(out.violation.message.find("[" + rule + "]"), std::string::npos) << out.violation.message;
      EXPECT_EQ(backend().allocations, allocs) << rule;
      EXPECT_EQ(backend().dispatches, dispatches) << rule;
    }
  }
  Problem d6 = named_op("sdpa").make(Case::parse("sdpa/S=1,Hq=2,Hkv=2,D=6,pos=0/float32/buffer/seed=1"));
  EXPECT_EQ(backend().run(named_op("sdpa"), d6).violation.message, "sdpa: head_dim (6) must be a multiple of 4 [head_dim_multiple_of_4]");
}

INSTANTIATE_TEST_SUITE_P(All, SdpaBackend, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

// Wall time of backend.run for naive, tiled and split on one decode and one prefill shape, float32,
// validation off: the median of 5 runs after a warm-up run that is also judged against the
// reference. backend.run also uploads, poisons and reads back every buffer; the same run with only
// the update_cache dispatch measures that fixed part, so run - fixed is the attention kernels'.
// Prints; asserts nothing about time.
std::vector<Dispatch> plan_update_only(const Problem& p) {
  std::vector<Dispatch> plan = named_op("sdpa").plan(p);
  plan.resize(1);
  return plan;
}

class SdpaTiming : public ::testing::TestWithParam<std::string> {};

TEST_P(SdpaTiming, DISABLED_DecodeAndPrefill) {
  std::string why;
  std::unique_ptr<Backend> b = open_backend(GetParam(), BackendConfig{}, &why);
  if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE: " << why;
  OpDef update_only = named_op("sdpa");
  update_only.plan = plan_update_only;
  const std::pair<const char*, const char*> shapes[] = {
      {"decode  S=1,   ctx=1024, Hq=32, Hkv=8, D=128", "sdpa/S=1,Hq=32,Hkv=8,D=128,pos=1023,Cmax=1024/float32/buffer/seed=1"},
      {"prefill S=128, ctx=128,  Hq=32, Hkv=8, D=64 ", "sdpa/S=128,Hq=32,Hkv=8,D=64,pos=0,Cmax=128/float32/buffer/seed=1"},
  };
  std::cout << "[ timing   ] " << GetParam() << ": " << b->info().name << "\n";
  for (auto [label, id] : shapes) {
    std::map<std::string, Problem> problems;
    for (const char* impl : {"naive", "tiled", "split"}) {
      Expected e = prepare(with_impl(id, impl));
      CaseResult r = judge(e, *b);
      ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
      problems[impl] = e.problem;
    }
    const std::pair<const char*, const OpDef*> variants[] = {
        {"naive", &named_op("sdpa")}, {"tiled", &named_op("sdpa")}, {"split", &named_op("sdpa")}, {"fixed", &update_only}};
    std::map<std::string, std::vector<double>> ms;
    for (int k = 0; k < 5; ++k)
      for (auto [name, op] : variants) {  // interleaved, so drift hits all alike
        const Problem& p = problems[std::string(name) == "fixed" ? "naive" : name];
        auto t0 = std::chrono::steady_clock::now();
        RunOutput out = b->run(*op, p);
        ms[name].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        ASSERT_EQ(out.status, RunOutput::Status::ok) << out.message;
      }
    auto median = [&](const char* name) {
      std::sort(ms[name].begin(), ms[name].end());
      return ms[name][2];
    };
    const double naive = median("naive"), tiled = median("tiled"), split = median("split"), fixed = median("fixed");
    std::cout << "[ timing   ] " << GetParam() << " " << label << " float32, median of 5 backend.run: naive "
              << naive << " ms, tiled " << tiled << " ms, split " << split << " ms, fixed part " << fixed
              << " ms -> attention kernels naive " << naive - fixed << " ms, tiled " << tiled - fixed << " ms, split "
              << split - fixed << " ms\n";
  }
}

INSTANTIATE_TEST_SUITE_P(All, SdpaTiming, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts::test
