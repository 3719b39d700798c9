// Every operator x dtype on every GPU backend against the float64 reference: the hand-picked edge
// cases and a few drawn cases must PASS, invalid ones must be REJECTED with the reference's rule id
// before anything is allocated or dispatched.
#include "tests/backend_fixture.h"

#include "core/registry.h"
#include "core/runner.h"
#include "tools/sweep.h"

namespace ts::test {
namespace {

using BackendOps = BackendTest;

std::string outcome_line(const CaseResult& r) {
  return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail);
}

void expect_agrees(Backend& b, const Case& c) {
  Expected e = prepare(c);
  ASSERT_TRUE(e.error.empty()) << c.id() << ": " << e.error;
  uint64_t allocs = b.allocations, dispatches = b.dispatches;
  CaseResult r = judge(e, b);
  if (e.violation) {
    EXPECT_EQ(r.outcome, Outcome::rejected) << outcome_line(r);
    EXPECT_EQ(r.rule, e.violation->rule) << c.id();
    EXPECT_EQ(b.allocations, allocs) << "rejected case allocated: " << c.id();
    EXPECT_EQ(b.dispatches, dispatches) << "rejected case dispatched: " << c.id();
  } else {
    EXPECT_EQ(r.outcome, Outcome::pass) << outcome_line(r);
    EXPECT_GT(b.dispatches, dispatches) << c.id();
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

TEST_P(BackendOps, DrawnCases) {
  for (const OpDef* op : all_ops())
    for (DType t : {DType::f32, DType::f16})
      for (int k = 0; k < 12; ++k) expect_agrees(backend(), draw_case(*op, t, k % 4 != 3, 77 + uint64_t(k), 10 * k));
}

// No kernels exist for bfloat16: valid cases say so (UNSUPPORTED), invalid ones are still REJECTED.
TEST_P(BackendOps, Bfloat16IsUnsupportedNotPassed) {
  for (const OpDef* op : all_ops()) {
    if (std::find(op->dtypes.begin(), op->dtypes.end(), DType::bf16) == op->dtypes.end()) continue;
    for (const Case& c : op->edge_cases(DType::bf16)) {
      Expected e = prepare(c);
      CaseResult r = judge(e, backend());
      EXPECT_EQ(r.outcome, e.violation ? Outcome::rejected : Outcome::unsupported) << outcome_line(r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, BackendOps, ::testing::ValuesIn(known_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts::test
