// Every operator x dtype on every GPU backend against the float64 reference: the hand-picked edge
// cases and a few drawn cases must PASS, invalid ones must be REJECTED with the reference's rule id
// before anything is allocated or dispatched.
#include "tests/backend_fixture.h"

#include "core/runner.h"
#include "gpu/gpu_backend.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts::test {
namespace {

using BackendOps = BackendTest;

std::string outcome_line(const CaseResult& r) {
  return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail);
}

void expect_agrees(Backend& b, const Expected& e) {
  const Case& c = e.c;
  ASSERT_TRUE(e.error.empty()) << c.id() << ": " << e.error;
  uint64_t allocs = b.allocations, dispatches = b.dispatches;
  CaseResult r = judge(e, b);
  if (e.violation) {
    EXPECT_EQ(r.outcome, Outcome::rejected) << outcome_line(r);
    EXPECT_EQ(r.rule, e.violation->rule) << c.id();
    EXPECT_EQ(b.allocations, allocs) << "rejected case allocated: " << c.id();
    EXPECT_EQ(b.dispatches, dispatches) << "rejected case dispatched: " << c.id();
  } else if (!test::lacks_capability(r, b)) {
    EXPECT_EQ(r.outcome, Outcome::pass) << outcome_line(r);
    EXPECT_GT(b.dispatches, dispatches) << c.id();
  }
}

void expect_agrees(Backend& b, const Case& c) { expect_agrees(b, prepare(c)); }

// A grid past a dimension's limit folds onto the next with rows no wider than it needs: every
// workgroup it launches past the grid's own costs a launch for nothing (PERFORMANCE.md has what
// it cost). Fewer spares than rows, never a whole row.
TEST(FoldGrid, RowsAreNoWiderThanTheGridNeeds) {
  DeviceLimits lim;  // 65,535 workgroups a dimension, WebGPU's limit
  const std::optional<Grid> g = fold_grid(65536ull * 64, 64, lim);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->groups[0], 32768u);
  EXPECT_EQ(g->groups[1], 2u);
  EXPECT_EQ(g->groups[2], 1u);
  for (uint32_t width : {3u, 7u, 65535u}) {
    lim.max_workgroups[0] = lim.max_workgroups[1] = lim.max_workgroups[2] = width;
    for (uint64_t groups : {1ull, 2ull, 3ull, 4ull, 10ull, 49ull, 50ull, 65535ull, 65536ull, 131071ull, 200000ull, 4294836225ull}) {
      const std::optional<Grid> f = fold_grid(groups * 64, 64, lim);
      const uint64_t cube = uint64_t(width) * width * width;
      if (groups > cube) {
        EXPECT_FALSE(f) << groups << " workgroups do not fit " << width << "^3";
        continue;
      }
      ASSERT_TRUE(f) << groups << " workgroups, width " << width;
      const uint64_t x = f->groups[0], y = f->groups[1], z = f->groups[2], launched = x * y * z;
      EXPECT_LE(x, width);
      EXPECT_LE(y, width);
      EXPECT_LE(z, width);
      EXPECT_GE(launched, groups) << "the grid does not hold " << groups;
      EXPECT_LT(launched - groups, y * z) << groups << " workgroups as " << x << " x " << y << " x " << z;
    }
  }
}

TEST_P(BackendOps, EdgeCasesFloat32) {
  for (const OpDef* op : all_ops())
    for (const Case& c : op->edge_cases(DType::f32)) expect_agrees(backend(), c);
}

TEST_P(BackendOps, EdgeCasesFloat16) {
  for (const OpDef* op : all_ops())
    for (const Case& c : op->edge_cases(DType::f16)) expect_agrees(backend(), c);
}

TEST_P(BackendOps, EdgeCasesInt8) {
  for (const OpDef* op : all_ops())
    if (std::find(op->dtypes.begin(), op->dtypes.end(), DType::i8) != op->dtypes.end())
      for (const Case& c : op->edge_cases(DType::i8)) expect_agrees(backend(), c);
}

TEST_P(BackendOps, DrawnCases) {
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      for (int k = 0; k < 12; ++k) expect_agrees(backend(), draw_case(*op, t, k % 4 != 3, 77 + uint64_t(k), 10 * k));
    }
}

TEST_P(BackendOps, EdgeCasesBfloat16) {
  int ops = 0;
  for (const OpDef* op : all_ops()) {
    if (std::find(op->dtypes.begin(), op->dtypes.end(), DType::bf16) == op->dtypes.end()) continue;
    ++ops;
    for (const Case& c : op->edge_cases(DType::bf16)) expect_agrees(backend(), c);
  }
  EXPECT_GT(ops, 0) << "no operator defines bfloat16";
}

// Each operator's large case really is past 2^24 elements and past the grid-fold threshold, and
// PASSes: float-held indices and folded grids are exercised on every backend.
TEST_P(BackendOps, LargeCasesPassPastTheIndexAndGridThresholds) {
  TS_RELEASE_PASS_ONLY("under ASan the large cases take minutes and test no memory rule");
  for (const OpDef* op : all_ops()) {
    Expected e = prepare(op->large_case());
    ASSERT_TRUE(e.error.empty() && !e.violation) << e.c.id();
    int64_t largest = 0;
    for (auto& [name, t] : e.problem.inputs) largest = std::max(largest, t.numel());
    for (auto& b : op->buffers(e.problem)) largest = std::max(largest, numel(b.shape));
    uint64_t widest = 0;
    for (auto& d : op->plan(e.problem)) widest = std::max(widest, d.invocations);
    EXPECT_GT(largest, int64_t(1) << 24) << e.c.id();
    EXPECT_GT(widest, 65535u * 64u) << e.c.id();
    expect_agrees(backend(), e);
  }
}

INSTANTIATE_TEST_SUITE_P(All, BackendOps, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts::test
