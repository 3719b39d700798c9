// The int8 operators on WebGPU (issue 11): the default sweep of q8ta_linear and q8ta_add passes;
// tiled and GEMV agree bit for bit at M = 1; the dot4I8Packed path and the scalar path agree bit for
// bit, and the dot path is the one taken where Dawn offers it; GEMV workgroups have the plan's 64
// invocations whatever the backend's default; and a kernel that rounds half away from zero instead
// of to even is caught by the exact (power-of-two scale) cases, shrunk, and reproduced from its id.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/runner.h"
#include "gpu/webgpu/webgpu_backend.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"
#include "tests/shrink_bug.h"
#include "tools/sweep.h"

namespace ts {
namespace {

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

bool has_cap(const Backend& b, const std::string& cap) {
  const auto caps = b.info().capabilities;
  return std::find(caps.begin(), caps.end(), cap) != caps.end();
}

// The int8 kernels with one line spliced in, on a backend of their own (the shared one keeps the
// shipped kernels).
std::unique_ptr<WebGpuBackend> backend_with(const WebGpuOptions& o, const std::map<std::string, std::string>& kernels) {
  std::string why;
  auto b = WebGpuBackend::create(o, &why);
  if (b)
    for (auto& [kernel, source] : kernels) b->set_kernel_source(kernel, source);
  return b;
}

std::string spliced(const std::string& kernel, const std::string& anchor, const std::string& bug, bool after) {
  return test::with_bug(cat("gpu/webgpu/shaders/", kernel, ".wgsl"), anchor, bug, after);
}

class Q8taWebGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    dot_ = test::shared_backend("webgpu", &why);
    if (!dot_) {
      if (test::missing_allowed("webgpu")) GTEST_SKIP() << "webgpu UNAVAILABLE: " << why;
      FAIL() << "webgpu backend UNAVAILABLE on this machine: " << why
             << " (set TOUCHSTONE_ALLOW_MISSING=webgpu to skip deliberately)";
    }
    // The scalar twin: WebGpuOptions::int_dot = false, kept in the fixture's cache like the shared one.
    auto& cache = test::backend_cache();
    auto it = cache.find("webgpu int_dot=false");
    if (it == cache.end()) {
      WebGpuOptions o;
      o.int_dot = false;
      std::string reason;
      std::unique_ptr<Backend> b = WebGpuBackend::create(o, &reason);
      it = cache.emplace("webgpu int_dot=false", std::make_pair(std::move(b), reason)).first;
    }
    scalar_ = it->second.first.get();
    ASSERT_NE(scalar_, nullptr) << it->second.second;
  }
  Backend& dot() { return *dot_; }
  Backend& scalar() { return *scalar_; }
  // The dot-product path runs only where Dawn knows dot4I8Packed; elsewhere both backends are scalar.
  void require_dot() {
    if (!has_cap(dot(), "int8-dot-product"))
      GTEST_SKIP() << "Dawn offers no dot4I8Packed here: " << testing::PrintToString(dot().info().capabilities);
  }

 private:
  Backend* dot_ = nullptr;
  Backend* scalar_ = nullptr;
};

const OpDef& linear_op() { return *find_op("q8ta_linear"); }
const OpDef& add_op() { return *find_op("q8ta_add"); }

// What `touchstone check --op q8ta_linear,q8ta_add --backend webgpu` runs: 200 cases each, seed 1.
// Every valid case PASSes, every invalid one is REJECTED with the reference's rule.
TEST_F(Q8taWebGpu, DefaultSweepPasses) {
  for (const OpDef* op : {&linear_op(), &add_op()}) {
    const Sweep sweep(*op, DType::i8, 200, 1);
    int pass = 0, rejected = 0;
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Expected e = prepare(sweep.at(k));
      ASSERT_TRUE(e.error.empty()) << e.c.id() << ": " << e.error;
      const CaseResult r = judge(e, dot());
      if (e.violation) {
        EXPECT_EQ(r.outcome, Outcome::rejected) << line(r);
        EXPECT_EQ(r.rule, e.violation->rule) << line(r);
        rejected += r.outcome == Outcome::rejected;
      } else {
        EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
        pass += r.outcome == Outcome::pass;
      }
    }
    EXPECT_GT(pass, 100) << op->name;
    EXPECT_GT(rejected, 10) << op->name;
  }
}

// Integer arithmetic is exact on both paths: the same case gives the same output bytes with
// dot4I8Packed (packed products minus x_zp * sum w) and without (products of x - x_zp), over the
// default sweep's valid cases of both operators (q8ta_add has no dot path: the same bytes too).
TEST_F(Q8taWebGpu, DotProductAndScalarPathsAgreeBitForBit) {
  require_dot();
  EXPECT_TRUE(has_cap(scalar(), "int8-dot-product=off")) << testing::PrintToString(scalar().info().capabilities);
  for (const OpDef* op : {&linear_op(), &add_op()}) {
    const Sweep sweep(*op, DType::i8, 200, 1);
    int compared = 0;
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Expected e = prepare(sweep.at(k));
      if (e.violation || !e.error.empty()) continue;
      const CaseResult a = judge(e, dot()), b = judge(e, scalar());
      ASSERT_EQ(a.outcome, Outcome::pass) << line(a);
      ASSERT_EQ(b.outcome, Outcome::pass) << line(b);
      EXPECT_EQ(a.digests, b.digests) << e.c.id();
      ++compared;
    }
    EXPECT_GT(compared, 100) << op->name;
  }
}

// The dot path is the one that runs when it is on, and only then: a bug spliced into the
// dot-product branch of both linear kernels fails on the dot backend and passes on the scalar one.
TEST_F(Q8taWebGpu, DotProductPathIsTakenOnlyWhenOn) {
  require_dot();
  const std::string bug = "        wsum += vec4<i32>(4096, 0, 0, 0);  // BUG: the dot-product branch only (x_zp * 4096 per group)";
  const std::string anchor = "wsum += vec4<i32>(dot4I8Packed(w.x, ONES)";
  const std::map<std::string, std::string> kernels = {{"q8ta_linear_tiled", spliced("q8ta_linear_tiled", anchor, bug, true)},
                                                      {"q8ta_linear_gemv", spliced("q8ta_linear_gemv", anchor, bug, true)}};
  WebGpuOptions off;
  off.int_dot = false;
  auto on_b = backend_with({}, kernels), off_b = backend_with(off, kernels);
  ASSERT_TRUE(on_b && off_b);
  for (const char* id : {"q8ta_linear/M=5,K=12,N=6,impl=tiled,x_zp=9/int8/buffer;out=int8_4w4c;x=int8_4w4c/seed=3",
                         "q8ta_linear/M=1,K=300,N=5,impl=gemv,x_zp=9/int8/buffer;out=int8_4w;x=int8_4w/seed=3"}) {
    const Expected e = prepare(Case::parse(id));
    const CaseResult on = judge(e, *on_b), scalar_run = judge(e, *off_b);
    EXPECT_EQ(on.outcome, Outcome::fail) << line(on);
    EXPECT_EQ(scalar_run.outcome, Outcome::pass) << line(scalar_run);
  }
}

// At M = 1 the tiled kernel and the GEMV are one function, bit for bit, over drawn cases in every
// storage the generator draws (on the dot path where it runs, and on the scalar path).
TEST_F(Q8taWebGpu, TiledAndGemvAgreeBitForBitAtM1) {
  int compared = 0;
  for (int k = 0; k < 40; ++k) {
    Case c = draw_case(linear_op(), DType::i8, true, 500 + uint64_t(k), 2 * k + 10);
    c.set("M", int64_t(1));
    for (bool on : {true, false}) {
      Backend& b = on ? dot() : scalar();
      std::map<std::string, uint64_t> first;
      for (const char* impl : {"tiled", "gemv"}) {
        c.set("impl", std::string(impl));
        const CaseResult r = judge(prepare(c), b);
        ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
        if (first.empty()) first = r.digests;
        else EXPECT_EQ(r.digests, first) << c.id() << (on ? " (dot product)" : " (scalar)");
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 80);
}

// The GEMV's workgroup is the plan's Dispatch::workgroup (64), not the backend's default size: a
// line that shifts every output by WG - 64 leaves them right with any default, and one that
// shifts them by WG - 32 does not.
TEST_F(Q8taWebGpu, GemvWorkgroupsHaveThePlans64Invocations) {
  const char* ids[] = {"q8ta_linear/M=1,K=259,N=4,impl=gemv/int8/buffer;out=int8_4w;x=int8_4w/seed=1",
                       "q8ta_linear/M=1,K=7,N=3,x_zp=-128,out_zp=127/int8/buffer;out=int8_4w;x=int8_4w/seed=2"};
  for (int wg : {64, 32})
    for (int shipped_default : {32, 64, 128}) {
      const std::string bug = cat("    v += vec4<i32>(i32(WG) - ", wg, ");");
      auto b = backend_with({}, {{"q8ta_linear_gemv", spliced("q8ta_linear_gemv", "out_store(t, v);", bug, false)}});
      ASSERT_TRUE(b);
      b->set_workgroup_size(uint32_t(shipped_default));
      for (const char* id : ids) {
        const CaseResult r = judge(prepare(Case::parse(id)), *b);
        EXPECT_EQ(r.outcome, wg == 64 ? Outcome::pass : Outcome::fail) << "WG - " << wg << ", default "
                                                                       << shipped_default << ": " << line(r);
      }
    }
}

// ---- A broken kernel: rounding half away from zero ----

// Spliced before the requantization's rounding: an exact tie x.5 rounds away from zero. Everything
// else is the shipped kernel. Only exact cases can catch it: elsewhere q is within the bound of v,
// whose slack covers a tie's both neighbours.
constexpr const char* kTiesAwayFromZero =
    "  if (abs(q - trunc(q)) == 0.5) { return i32(clamp(q + 0.5 * sign(q) + f32(pc.out_zp), -128.0, 127.0)); }"
    "  // BUG: ties away from zero";

struct RoundingBug {
  std::string op, kernel;
};
void PrintTo(const RoundingBug& b, std::ostream* os) { *os << b.kernel; }

class Q8taWebGpuRounding : public ::testing::TestWithParam<RoundingBug> {};

// The property over the operator's generator fails, RapidCheck shrinks it to a power-of-two case
// (scales=pow2: the exact cases), its printed id reproduces the failure, and the shipped kernel
// passes it.
TEST_P(Q8taWebGpuRounding, TiesAwayFromZeroShrinkToAnExactCaseThatReproduces) {
  const RoundingBug& bug = GetParam();
  std::string why;
  if (!test::shared_backend("webgpu", &why)) {
    if (test::missing_allowed("webgpu")) GTEST_SKIP() << "webgpu UNAVAILABLE: " << why;
    FAIL() << "webgpu backend UNAVAILABLE: " << why;
  }
  auto broken = backend_with({}, {{bug.kernel, spliced(bug.kernel, "round(q) + f32(pc.out_zp)", kTiesAwayFromZero, false)}});
  ASSERT_TRUE(broken);
  const OpDef& op = *find_op(bug.op);
  const std::string id = test::shrunk_failure(*broken, op.generator(DType::i8, true));
  ASSERT_FALSE(id.empty()) << bug.kernel << ": rounding ties away from zero was not caught";
  const Case shrunk = Case::parse(id);
  EXPECT_EQ(shrunk.word("scales", "random"), "pow2") << id;
  const CaseResult r = judge(prepare(shrunk), *broken);
  ASSERT_EQ(r.outcome, Outcome::fail) << line(r);
  ASSERT_FALSE(r.reports.empty());
  EXPECT_GT(r.reports[0].mismatches, 0) << line(r);
  test::expect_reproduces(id, *broken);
  const CaseResult ok = judge(prepare(shrunk), *test::shared_backend("webgpu", &why));
  EXPECT_EQ(ok.outcome, Outcome::pass) << line(ok);
}

INSTANTIATE_TEST_SUITE_P(All, Q8taWebGpuRounding,
                         ::testing::Values(RoundingBug{"q8ta_add", "q8ta_add"}, RoundingBug{"q8ta_linear", "q8ta_linear_tiled"},
                                           RoundingBug{"q8ta_linear", "q8ta_linear_gemv"}),
                         [](const auto& info) { return info.param.kernel; });

}  // namespace
}  // namespace ts
