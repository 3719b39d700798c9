// The int8 operators on every GPU backend (issue 11), one suite instantiated per backend: the default
// sweep of q8ta_linear and q8ta_add passes; the packed dot-product path and the scalar path agree
// bit for bit, and the dot path is the one taken where the device has it; tiled and GEMV agree bit
// for bit at M = 1; GEMV workgroups have the plan's 64 invocations whatever the backend's default.
// Broken kernels, each caught by a property, shrunk, and reproduced from the printed id: rounding
// half away from zero (caught by the exact power-of-two cases), a GEMV that drops the last partial
// K-block, and a tiled kernel that never stores the last output column (caught by the two-sentinel
// rule: its elements hold both sentinels).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/runner.h"
#include "gpu/gpu_backend.h"
#include "gpu/plans/registry.h"
#include "tests/q8ta_fixture.h"
#include "tests/shrink_bug.h"
#include "tools/sweep.h"

namespace ts {
namespace {

using test::LangSplices;
using test::has_cap;
using test::line;
using test::Q8ta;
using test::Splice;

const OpDef& linear_op() { return *find_op("q8ta_linear"); }
const OpDef& add_op() { return *find_op("q8ta_add"); }

// What `touchstone check --op q8ta_linear,q8ta_add` runs: 200 cases each, seed 1. Every valid case
// PASSes, every invalid one is REJECTED with the reference's rule.
TEST_P(Q8ta, DefaultSweepPasses) {
  for (const OpDef* op : {&linear_op(), &add_op()}) {
    const SweepTally t = default_sweep(*op);
    EXPECT_GT(t.pass(), 100) << op->name;
    EXPECT_GT(t.rejected, 10) << op->name;
  }
}

// Integer arithmetic is exact on both paths: the same case gives the same output bytes with the
// packed dot product (products minus x_zp * sum w) and without (products of x - x_zp), over the
// default sweep's valid cases of both operators (q8ta_add has no dot path: the same bytes too).
TEST_P(Q8ta, DotProductAndScalarPathsAgreeBitForBit) {
  require_dot();
  EXPECT_TRUE(has_cap(scalar(), "int8-dot-product=off")) << testing::PrintToString(scalar().info().capabilities);
  for (const OpDef* op : {&linear_op(), &add_op()}) {
    const Sweep sweep(*op, DType::i8, 200, 1);
    int compared = 0;
    for (int64_t k = 0; k < sweep.size(); ++k) {
      Expected e = prepare(sweep.at(k));
      if (e.violation || !e.error.empty()) continue;
      e.problem.fallback_paths = false;  // the dot path for every case, odd seeds too
      const CaseResult a = judge(e, dot()), b = judge(e, scalar());
      if (test::lacks_capability(a, dot())) continue;
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
TEST_P(Q8ta, DotProductPathIsTakenOnlyWhenOn) {
  require_dot();
  const LangSplices bug = {{"wsum += ivec4(ts_dot4(w.x, TS_ONES)", "    wsum += ivec4(4096, 0, 0, 0);  // BUG: dot path only", true},
                           {"wsum += vec4<i32>(dot4I8Packed(w.x, ONES)", "        wsum += vec4<i32>(4096, 0, 0, 0);  // BUG: dot path only", true}};
  // The tiled GLSL kernel's K step is a macro (q8ta_gemm_tile.glsl): its bug goes after the K loops.
  LangSplices tiled = bug;
  tiled.glsl = {"acc[r] -= pc.x_zp * wsum;", "  wsum += ivec4(4096, 0, 0, 0);  // BUG: dot path only", false};
  const std::map<std::string, LangSplices> kernels = {{"q8ta_linear_tiled", tiled}, {"q8ta_linear_gemv", bug}};
  auto on_b = broken(kernels, true), off_b = broken(kernels, false);
  ASSERT_TRUE(on_b && off_b);
  // Even seeds: an odd one runs the fallbacks, the scalar path, everywhere (Problem::fallback_paths).
  for (const char* id : {"q8ta_linear/M=5,K=12,N=6,impl=tiled,x_zp=9/int8/buffer;out=int8_4w4c;x=int8_4w4c/seed=4",
                         "q8ta_linear/M=1,K=300,N=5,impl=gemv,x_zp=9/int8/buffer;out=int8_4w;x=int8_4w/seed=4"}) {
    const Expected e = prepare(Case::parse(id));
    EXPECT_EQ(judge(e, *on_b).outcome, Outcome::fail) << id;
    EXPECT_EQ(judge(e, *off_b).outcome, Outcome::pass) << id;
  }
}

// At M = 1 the tiled kernel and the GEMV are one function, bit for bit, over drawn cases in every
// storage the generator draws, on the dot path where it runs and on the scalar path.
TEST_P(Q8ta, TiledAndGemvAgreeBitForBitAtM1) {
  int compared = 0;
  for (int k = 0; k < 40; ++k) {
    Case c = draw_case(linear_op(), DType::i8, true, 500 + uint64_t(k), 2 * k + 10);
    c.set("M", int64_t(1));
    for (Backend* b : {&dot(), &scalar()}) {
      std::map<std::string, uint64_t> first;
      for (const char* impl : {"tiled", "gemv"}) {
        c.set("impl", std::string(impl));
        const CaseResult r = judge(prepare(c), *b);
        ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
        if (first.empty()) first = r.digests;
        else EXPECT_EQ(r.digests, first) << c.id();
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 80);
}

// The GEMV's workgroup is the plan's Dispatch::workgroup (64), not the backend's default size: a
// line that shifts every output by (workgroup size - 64) leaves them right with any default, one
// that shifts them by (size - 32) does not.
TEST_P(Q8ta, GemvWorkgroupsHaveThePlans64Invocations) {
  const char* ids[] = {"q8ta_linear/M=1,K=259,N=4,impl=gemv/int8/buffer;out=int8_4w;x=int8_4w/seed=1",
                       "q8ta_linear/M=1,K=7,N=3,x_zp=-128,out_zp=127/int8/buffer;out=int8_4w;x=int8_4w/seed=2"};
  for (int wg : {64, 32})
    for (uint32_t shipped_default : {32u, 64u, 128u}) {
      auto b = broken({{"q8ta_linear_gemv",
                        {{"out_store(t, v);", cat("    v += ivec4(int(gl_WorkGroupSize.x) - ", wg, ");"), false},
                         {"out_store(t, v);", cat("    v += vec4<i32>(i32(WG) - ", wg, ");"), false}}}});
      ASSERT_TRUE(b);
      b->set_workgroup_size(shipped_default);
      for (const char* id : ids) {
        const CaseResult r = judge(prepare(Case::parse(id)), *b);
        EXPECT_EQ(r.outcome, wg == 64 ? Outcome::pass : Outcome::fail)
            << "size - " << wg << ", default " << shipped_default << ": " << line(r);
      }
    }
}

// ---- Broken kernels, shrunk and reproduced ----

struct Bug {
  std::string name, op, kernel;
  LangSplices splice;
};

// An exact tie x.5 rounds away from zero; everything else is the shipped kernel. Only exact cases can
// catch it: elsewhere q is within the bound of v, whose slack covers a tie's both neighbours.
const LangSplices kTiesAway = {
    {"roundEven(q) + float(pc.out_zp)",
     "  if (abs(q - trunc(q)) == 0.5) return int(clamp(q + 0.5 * sign(q) + float(pc.out_zp), -128.0, 127.0));  // BUG", false},
    {"round(q) + f32(pc.out_zp)",
     "  if (abs(q - trunc(q)) == 0.5) { return i32(clamp(q + 0.5 * sign(q) + f32(pc.out_zp), -128.0, 127.0)); }  // BUG", false}};
// The same for q8ta_add's WGSL, whose requantization returns the clamped integer as f32 (its bytes
// are taken without a conversion).
const LangSplices kTiesAwayAdd = {
    kTiesAway.glsl,
    {"round(q) + f32(pc.out_zp)",
     "  if (abs(q - trunc(q)) == 0.5) { return clamp(q + 0.5 * sign(q) + f32(pc.out_zp), -128.0, 127.0); }  // BUG", false}};

const std::vector<Bug>& bugs() {
  static const std::vector<Bug> b = {
      {"ties_away_add", "q8ta_add", "q8ta_add", kTiesAwayAdd},
      {"ties_away_tiled", "q8ta_linear", "q8ta_linear_tiled", kTiesAway},
      {"ties_away_gemv", "q8ta_linear", "q8ta_linear_gemv", kTiesAway},
      // The K % 4 elements past the last whole group of 4 are never added.
      {"gemv_drops_last_partial_k_block", "q8ta_linear", "q8ta_linear_gemv",
       {{"for (uint k = K4; k < K; ++k) {", "        if (k >= K4) break;  // BUG", true},
        {"for (var k = K4; k < K; k++) {", "        if (k >= K4) { break; }  // BUG", true}}},
      // The last output column is never stored: only the two sentinels can tell (int8 poison is a value).
      {"tiled_skips_last_column", "q8ta_linear", "q8ta_linear_tiled",
       {{"uint i = gemm_out_index(r0 + r, c0 + c), t = out_texel_of(i);", "      if (c0 + c == pc.N - 1u) continue;  // BUG", false},
        {"let i = gemm_out_index(r0 + r, c0 + c);", "      if (c0 + c == pc.N - 1u) { continue; }  // BUG", false}}},
  };
  return b;
}

class Q8taBugs : public Q8ta {
 protected:
  void check(const Bug& bug) {
    auto b = broken({{bug.kernel, bug.splice}});
    ASSERT_TRUE(b);
    const OpDef& op = *find_op(bug.op);
    const std::string id = test::shrunk_failure(*b, op.generator(op, DType::i8, true));
    ASSERT_FALSE(id.empty()) << bug.name << " was not caught";
    const Case shrunk = Case::parse(id);
    const CaseResult r = judge(prepare(shrunk), *b);
    ASSERT_EQ(r.outcome, Outcome::fail) << line(r);
    ASSERT_FALSE(r.reports.empty());
    if (bug.name.rfind("ties_away", 0) == 0) {
      EXPECT_EQ(shrunk.word("scales", "random"), "pow2") << id;  // an exact case, bit for bit
      EXPECT_EQ(r.reports[0].unwritten, 0) << line(r);
    } else if (bug.name == "gemv_drops_last_partial_k_block") {
      EXPECT_EQ(shrunk.get("M"), 1) << id;
      EXPECT_NE(shrunk.get("K") % 4, 0) << id;
      EXPECT_EQ(r.reports[0].unwritten, 0) << line(r);
    } else {
      EXPECT_GT(r.reports[0].unwritten, 0) << line(r);
      EXPECT_NE(r.detail.find("never written"), std::string::npos) << line(r);
    }
    test::expect_reproduces(id, *b);
    EXPECT_EQ(judge(prepare(shrunk), dot()).outcome, Outcome::pass) << "the shipped kernel passes " << id;
  }
};

TEST_P(Q8taBugs, EachIsCaughtShrunkAndReproduced) {
  for (const Bug& bug : bugs()) {
    SCOPED_TRACE(bug.name);
    check(bug);
  }
}

INSTANTIATE_TEST_SUITE_P(All, Q8ta, ::testing::Values("vulkan", "webgpu"), [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(All, Q8taBugs, ::testing::Values("vulkan", "webgpu"), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
