// The float64 references: hand-computed values, the SPEC's identities between the RoPE variants,
// and norm preservation of every rotation.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "core/runner.h"
#include "reference/ops.h"
#include "gpu/plans/registry.h"

namespace ts {
namespace {

Tensor t64(Shape s, std::vector<double> v) {
  Tensor t(DType::f64, std::move(s));
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

Problem problem(Tensors in) {
  Problem p;
  p.dtype = DType::f64;
  p.inputs = std::move(in);
  return p;
}

TEST(Reference, RopeLlamaByHand) {
  // One pair (1, 2) rotated with cos 0.5, sin 0.25: (1*0.5 - 2*0.25, 1*0.25 + 2*0.5) = (0, 1.25).
  Problem p = problem({{"xq", t64({1, 1, 1, 2}, {1, 2})}, {"xk", t64({1, 1, 1, 2}, {-4, 8})},
                       {"freqs_cos", t64({1, 1}, {0.5})}, {"freqs_sin", t64({1, 1}, {0.25})}});
  ASSERT_FALSE(named_op("rope_llama").validate(p));
  Tensors out = named_op("rope_llama").reference(p);
  EXPECT_EQ(values(out.at("xq_out")), (std::vector<double>{0, 1.25}));
  EXPECT_EQ(values(out.at("xk_out")), (std::vector<double>{-4, 3}));  // (-2 - 2, -1 + 4)
}

TEST(Reference, RopeHalfByHand) {
  // rotate_half([1,2,3,4]) = [-3,-4,1,2]; with cos = 1, sin = 1: [-2,-2,4,6].
  Problem p = problem({{"x", t64({1, 1, 1, 4}, {1, 2, 3, 4})}, {"cos", t64({1, 4}, {1, 1, 1, 1})},
                       {"sin", t64({1, 4}, {1, 1, 1, 1})}});
  EXPECT_EQ(values(named_op("rope_half").reference(p).at("out")), (std::vector<double>{-2, -2, 4, 6}));
}

TEST(Reference, RopeCisByHand) {
  // Pair (1, 0) by angle 90 degrees (c=0, s=1) -> (0, 1); pair (3, 4) by (c=1, s=0) -> unchanged.
  Problem p = problem({{"x", t64({1, 1, 4}, {1, 0, 3, 4})}, {"freqs_cis", t64({1, 2, 2}, {0, 1, 1, 0})}});
  EXPECT_EQ(values(named_op("rope_cis").reference(p).at("out")), (std::vector<double>{0, 1, 3, 4}));
}

TEST(Reference, RopeMatrixByHand) {
  // m swaps the two columns: x@m = [x1, x0]; out = x*cos + (x@m)*sin with cos = [1,2], sin = [10,100].
  Problem p = problem({{"x", t64({1, 1, 1, 2}, {3, 5})}, {"m", t64({2, 2}, {0, 1, 1, 0})},
                       {"cos", t64({1, 2}, {1, 2})}, {"sin", t64({1, 2}, {10, 100})}});
  EXPECT_EQ(values(named_op("rope_matrix").reference(p).at("out")), (std::vector<double>{3 + 50, 10 + 300}));
}

// SPEC identity: rope_matrix with the half-rotation matrix equals rope_half on the same x, cos, sin.
TEST(Reference, RopeMatrixHalfEqualsRopeHalf) {
  for (int64_t D : {2, 6, 8, 64}) {
    Case c = Case::parse(cat("rope_matrix/B=2,H=3,S=5,D=", D, ",mode=half,pos=7/float32/buffer/seed=", D));
    Problem pm = named_op("rope_matrix").make(c);
    Problem ph = problem({{"x", pm.inputs.at("x")}, {"cos", pm.inputs.at("cos")}, {"sin", pm.inputs.at("sin")}});
    ph.dtype = DType::f32;
    ASSERT_FALSE(named_op("rope_half").validate(ph));
    auto a = values(named_op("rope_matrix").reference(pm).at("out")), b = values(named_op("rope_half").reference(ph).at("out"));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-12) << "D=" << D << " i=" << i;
  }
}

// SPEC identity: rope_matrix with the interleave matrix and cos/sin repeated per pair equals the
// interleaved rotation of rope_llama (x [1,1,S,D] and xq [1,S,1,D] share one memory order).
TEST(Reference, RopeMatrixInterleaveEqualsRopeLlama) {
  for (int64_t D : {2, 6, 16}) {
    const int64_t S = 4;
    Case c = Case::parse(cat("rope_matrix/B=1,H=1,S=", S, ",D=", D, ",mode=interleave/float32/buffer/seed=3"));
    Problem pm = named_op("rope_matrix").make(c);
    Tensor xq = pm.inputs.at("x");
    xq.shape = {1, S, 1, D};
    Tensor fc(DType::f32, {S, D / 2}), fs(DType::f32, {S, D / 2});
    for (int64_t s = 0; s < S; ++s)
      for (int64_t k = 0; k < D / 2; ++k) {
        fc.set(s * D / 2 + k, pm.inputs.at("cos").get(s * D + 2 * k));
        fs.set(s * D / 2 + k, pm.inputs.at("sin").get(s * D + 2 * k));
        ASSERT_EQ(pm.inputs.at("cos").get(s * D + 2 * k + 1), fc.get(s * D / 2 + k)) << "cos repeated per pair";
      }
    Problem pl = problem({{"xq", xq}, {"xk", xq}, {"freqs_cos", fc}, {"freqs_sin", fs}});
    pl.dtype = DType::f32;
    ASSERT_FALSE(named_op("rope_llama").validate(pl));
    auto a = values(named_op("rope_matrix").reference(pm).at("out")), b = values(named_op("rope_llama").reference(pl).at("xq_out"));
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-12) << "D=" << D << " i=" << i;
  }
}

// (a c - b s)^2 + (a s + b c)^2 = (a^2 + b^2)(c^2 + s^2): every rotation preserves its pair's norm
// up to the (rounded) table's own norm.
TEST(Reference, RotationsPreservePairNorms) {
  Problem p = named_op("rope_llama").make(Case::parse("rope_llama/B=2,S=3,Hq=4,Hkv=2,D=10,pos=999/float32/buffer/seed=5"));
  Tensors out = named_op("rope_llama").reference(p);
  const Tensor &x = p.inputs.at("xq"), &o = out.at("xq_out"), &c = p.inputs.at("freqs_cos"), &n = p.inputs.at("freqs_sin");
  for (int64_t pr = 0; pr < x.numel() / 2; ++pr) {
    int64_t i = pr % 5, s = (pr / 5 / 4) % 3;
    double cs = c.get(s * 5 + i), sn = n.get(s * 5 + i);
    double in = x.get(2 * pr) * x.get(2 * pr) + x.get(2 * pr + 1) * x.get(2 * pr + 1);
    double got = o.get(2 * pr) * o.get(2 * pr) + o.get(2 * pr + 1) * o.get(2 * pr + 1);
    ASSERT_NEAR(got, in * (cs * cs + sn * sn), 1e-12);
  }
  Problem h = named_op("rope_half").make(Case::parse("rope_half/B=1,H=2,S=3,D=8,pos=5/float32/buffer/seed=9"));
  Tensors hout = named_op("rope_half").reference(h);
  const Tensor &hx = h.inputs.at("x"), &ho = hout.at("out");
  for (int64_t r = 0; r < hx.numel() / 8; ++r)
    for (int64_t j = 0; j < 4; ++j) {
      double a = hx.get(r * 8 + j), b = hx.get(r * 8 + j + 4), oa = ho.get(r * 8 + j), ob = ho.get(r * 8 + j + 4);
      double cs = h.inputs.at("cos").get((r % 3) * 8 + j), sn = h.inputs.at("sin").get((r % 3) * 8 + j);
      ASSERT_NEAR(oa * oa + ob * ob, (a * a + b * b) * (cs * cs + sn * sn), 1e-12);
    }
}

// The seed's largest shape: the reference is a real GEMM and must stay fast (about a second on
// 2 cores; this asserts nothing about time, the closing note measures it).
TEST(Reference, RopeMatrixSeedShapeIsAMatmul) {
  Problem p = named_op("rope_matrix").make(Case::parse("rope_matrix/B=1,H=2,S=64,D=128,mode=dense/float32/buffer/seed=1"));
  Tensors out = named_op("rope_matrix").reference(p);
  const Tensor &x = p.inputs.at("x"), &m = p.inputs.at("m");
  // Spot-check one element against a direct dot product.
  int64_t row = 77, d = 5;
  double dot = 0;
  for (int64_t k = 0; k < 128; ++k) dot += x.get(row * 128 + k) * m.get(k * 128 + d);
  double want = x.get(row * 128 + d) * p.inputs.at("cos").get((row % 64) * 128 + d) + dot * p.inputs.at("sin").get((row % 64) * 128 + d);
  EXPECT_NEAR(out.at("out").get(row * 128 + d), want, 1e-12);
}

// Every edge case's verdict is stable, and invalid ones name a rule the operator lists.
TEST(Reference, EdgeCasesNameListedRules) {
  for (const OpDef* op : all_ops())
    for (const Case& c : op->edge_cases(DType::f32)) {
      Expected e;
      try {
        e = prepare(c);
      } catch (const std::exception& x) {
        ADD_FAILURE() << c.id() << ": " << x.what();
        continue;
      }
      ASSERT_TRUE(e.error.empty()) << c.id() << ": " << e.error;
      if (!e.violation) continue;
      bool listed = false;
      for (auto& r : op->rules) listed |= r.id == e.violation->rule;
      EXPECT_TRUE(listed) << c.id() << " fired unlisted rule " << e.violation->rule;
      EXPECT_NE(e.violation->message.find("[" + e.violation->rule + "]"), std::string::npos);
    }
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {
// The rope-matrix seed's shape x [1,24,28800,128] (issue 2: about a second on 2 cores). Disabled: a
// measurement, not an assertion; run with --gtest_also_run_disabled_tests.
TEST(ReferenceTiming, DISABLED_RopeMatrixSeedShape) {
  Problem p = named_op("rope_matrix").make(Case::parse("rope_matrix/B=1,H=24,S=28800,D=128,mode=dense/float32/buffer/seed=1"));
  auto t0 = std::chrono::steady_clock::now();
  Tensors out = named_op("rope_matrix").reference(p);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ timing ] rope_matrix reference on x [1,24,28800,128]: " << s << " s\n";
  EXPECT_EQ(out.at("out").numel(), 24 * 28800 * 128);
}
}  // namespace
}  // namespace ts
