// The comparison rules of SPEC "Comparison and outcomes".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "core/compare.h"
#include "core/poison.h"

namespace ts {
namespace {

Tensor filled(DType t, std::vector<double> v) {
  Tensor r(t, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) r.set(int64_t(i), v[i]);
  return r;
}

TEST(Compare, ToleranceIsAtolPlusRtolTimesRef) {
  Tensor ref = filled(DType::f64, {1.0, 100.0});
  Tolerance tol{1e-3, 1e-2};
  EXPECT_TRUE(compare("o", filled(DType::f64, {1.0 + 0.0109, 101.0}), ref, tol, false).ok());
  auto r = compare("o", filled(DType::f64, {1.0 + 0.0111, 100.0}), ref, tol, false);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.first_bad, 0);
  EXPECT_GT(r.worst, 1.0);
}

TEST(Compare, NaNNeverPassesAndInfMustMatchSign) {
  Tolerance loose{1e9, 1e9};
  EXPECT_FALSE(compare("o", filled(DType::f32, {NAN}), filled(DType::f64, {1.0}), loose, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::f32, {NAN}), filled(DType::f64, {NAN}), loose, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::f32, {1.0}), filled(DType::f64, {NAN}), loose, false).ok());
  EXPECT_TRUE(compare("o", filled(DType::f32, {INFINITY}), filled(DType::f64, {INFINITY}), loose, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::f32, {-INFINITY}), filled(DType::f64, {INFINITY}), loose, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::f32, {1e30}), filled(DType::f64, {INFINITY}), loose, false).ok());
}

TEST(Compare, PoisonMeansUnwritten) {
  Tensor got = filled(DType::f16, {1.0, 2.0, 3.0});
  uint64_t p = poison_bits(DType::f16);
  std::memcpy(got.bytes.data() + 2 * 2, &p, 2);
  auto r = compare("o", got, filled(DType::f64, {1, 2, 3}), {1, 1}, true);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_EQ(r.first_bad, 2);
}

// int8 holding the sentinel is a legal value: only the backend's two-run mask says unwritten, even
// where the value would be right.
TEST(Compare, IntegerUnwrittenComesFromTheTwoSentinelMask) {
  Tensor got = filled(DType::i8, {90, 90, 7});  // 90 = 0x5A, the first sentinel
  Tensor ref = filled(DType::f64, {90, 90, 7});
  EXPECT_TRUE(compare("o", got, ref, {0, 0}, true).ok()) << "no mask: a sentinel-valued answer is an answer";
  const std::vector<uint8_t> mask = {0, 1, 0};
  auto r = compare("o", got, ref, {0, 0}, true, &mask);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_bad, 1);
}

TEST(Compare, StatisticsAndUlp) {
  Tensor ref = filled(DType::f64, {1.0, -2.0, 4.0});
  Tensor got = filled(DType::f32, {1.0, -2.0, 4.0});
  got.set(2, std::nextafter(4.0f, 5.0f));
  auto r = compare("o", got, ref, {1e-5, 1.3e-6}, true);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.max_ulp, 1u);
  EXPECT_DOUBLE_EQ(r.max_abs, std::nextafter(4.0f, 5.0f) - 4.0);
  EXPECT_NEAR(r.nmse, r.max_abs * r.max_abs / 21.0, 1e-20);
  EXPECT_EQ(r.bad_per_dim.size(), 1u);
}

// A long output is compared in ranges on several threads: the report counts, places and measures
// mismatches planted in different ranges (the first, one at a range's edge, the last) as one pass
// over every element would.
TEST(Compare, ALongOutputInRangesGivesOnePassesReport) {
  const int64_t rows = 1200, cols = 1500;  // 1.8M elements: past the threaded threshold
  Tensor ref(DType::f64, {rows, cols}), got(DType::f32, {rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) {
    const double v = double(i % 977) - 488.0;
    ref.set(i, v);
    got.set(i, v);
  }
  const int64_t edge = (int64_t(1) << 18) - 1;  // the last element of the first range
  const std::vector<int64_t> planted = {7, edge, edge + 1, 1000000, rows * cols - 1};
  for (int64_t i : planted) got.set(i, ref.get(i) + 3.0);
  uint64_t p = poison_bits(DType::f32);
  std::memcpy(got.bytes.data() + 4 * 1500000, &p, 4);
  const CompareReport r = compare("o", got, ref, {1.0, 0.0}, true);
  EXPECT_EQ(r.count, rows * cols);
  EXPECT_EQ(r.mismatches, int64_t(planted.size()) + 1);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_EQ(r.first_bad, 7);
  EXPECT_DOUBLE_EQ(r.first_got, ref.get(7) + 3.0);
  EXPECT_EQ(r.worst, INFINITY);  // the unwritten element
  double max_rel = 0;
  for (int64_t i : planted)
    if (ref.get(i) != 0) max_rel = std::max(max_rel, 3.0 / std::fabs(ref.get(i)));
  EXPECT_DOUBLE_EQ(r.max_rel, max_rel);
  EXPECT_DOUBLE_EQ(r.max_abs, INFINITY);
  int64_t per_row = 0;
  for (int64_t n : r.bad_per_dim[0]) per_row += n;
  EXPECT_EQ(per_row, r.mismatches);
  EXPECT_EQ(r.bad_per_dim[0][size_t(edge / cols)], edge / cols == (edge + 1) / cols ? 2 : 1);
  EXPECT_EQ(r.bad_per_dim[1][size_t(1000000 % cols)], 1 + (1000000 % cols == 7 ? 1 : 0));
  EXPECT_EQ(r.bad_per_dim[0][size_t(rows - 1)], 1);
  // Without the poisoned element the worst ratio is the planted error over atol.
  got.set(1500000, ref.get(1500000));
  EXPECT_DOUBLE_EQ(compare("o", got, ref, {1.0, 0.0}, true).worst, 3.0);
}

TEST(Compare, Int8AllowsOneStep) {
  Tensor ref = filled(DType::i8, {5, -7});
  EXPECT_TRUE(compare("o", filled(DType::i8, {6, -8}), ref, {1, 0}, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::i8, {7, -7}), ref, {1, 0}, false).ok());
}

std::shared_ptr<const Tensor> bound(std::vector<double> v) { return std::make_shared<const Tensor>(filled(DType::f64, v)); }

// Element i of output o passes iff |got - ref| <= atol + elem[o][i] + rtol*|ref|; worst is err/allowed.
TEST(Compare, PerElementBoundAddsToAtolAndRtol) {
  Tensor ref = filled(DType::f64, {1.0, 100.0, 0.0});
  Tolerance tol{1e-3, 1e-2, {{"o", bound({0.5, 0.0, 1e-3})}}};
  // allowed: 1e-3 + 0.5 + 1e-2 = 0.511; 1e-3 + 0 + 1 = 1.001; 1e-3 + 1e-3 + 0 = 2e-3
  auto ok = compare("o", filled(DType::f64, {1.0 + 0.2555, 100.0 - 0.5005, 0.0019}), ref, tol, false);
  EXPECT_TRUE(ok.ok());
  EXPECT_NEAR(ok.worst, 0.0019 / 2e-3, 1e-12);
  auto bad = compare("o", filled(DType::f64, {1.0, 100.0, -0.0021}), ref, tol, false);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.first_bad, 2);
  EXPECT_DOUBLE_EQ(bad.first_allowed, 2e-3);
  EXPECT_NEAR(bad.worst, 0.0021 / 2e-3, 1e-12);
  // Only output o's bound applies to o: another output is held to the scalars alone.
  EXPECT_FALSE(compare("p", filled(DType::f64, {1.0 + 0.5109, 100.0, 0.0}), ref, tol, false).ok());
}

TEST(Compare, NaNNeverPassesEvenAnInfiniteBound) {
  Tolerance tol{0, 0, {{"o", bound({INFINITY})}}};
  EXPECT_TRUE(compare("o", filled(DType::f32, {1e30}), filled(DType::f64, {0.0}), tol, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::f32, {NAN}), filled(DType::f64, {0.0}), tol, false).ok());
}

TEST(Compare, ABoundOfAnotherShapeIsAnError) {
  Tolerance tol{0, 0, {{"o", bound({1.0, 1.0})}}};
  EXPECT_THROW(compare("o", filled(DType::f32, {1.0}), filled(DType::f64, {1.0}), tol, false), std::logic_error);
}

TEST(Compare, ScaledMultipliesEveryPartAndLeavesTheOriginal) {
  Tolerance tol{1e-3, 1e-2, {{"o", bound({0.5, 2.0})}}};
  Tolerance two = scaled(tol, 2);
  EXPECT_EQ(two.atol, 2e-3);
  EXPECT_EQ(two.rtol, 2e-2);
  EXPECT_EQ(two.bound("o")->get(0), 1.0);
  EXPECT_EQ(two.bound("o")->get(1), 4.0);
  EXPECT_EQ(tol.bound("o")->get(1), 2.0);
  EXPECT_EQ(two.bound("p"), nullptr);
}

TEST(Compare, ShapeMismatchFails) {
  EXPECT_FALSE(compare("o", Tensor(DType::f32, {2, 2}), Tensor(DType::f64, {4}), {1, 1}, false).ok());
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// The ULP distance between float64 values of opposite sign and large magnitude passes int64's
// range; it is computed in uint64 (UBSan halted on the signed overflow before).
TEST(Compare, UlpDistanceAcrossZeroInFloat64DoesNotOverflow) {
  Tensor got(DType::f64, {1}), want(DType::f64, {1});
  got.set(0, -1e300);
  want.set(0, 1e300);
  CompareReport r = compare("x", got, want, Tolerance{}, false);
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.max_ulp, uint64_t(1) << 62);
}

}  // namespace
}  // namespace ts
