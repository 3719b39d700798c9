// The comparison rules of SPEC "Comparison and outcomes".
#include <gtest/gtest.h>

#include <cmath>

#include "core/compare.h"
#include "gpu/gpu_backend.h"

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

TEST(Compare, Int8AllowsOneStep) {
  Tensor ref = filled(DType::i8, {5, -7});
  EXPECT_TRUE(compare("o", filled(DType::i8, {6, -8}), ref, {1, 0}, false).ok());
  EXPECT_FALSE(compare("o", filled(DType::i8, {7, -7}), ref, {1, 0}, false).ok());
}

TEST(Compare, ShapeMismatchFails) {
  EXPECT_FALSE(compare("o", Tensor(DType::f32, {2, 2}), Tensor(DType::f64, {4}), {1, 1}, false).ok());
}

}  // namespace
}  // namespace ts
