// The derived tolerances (gpu/plans/*.cpp) hold for every float32 evaluation that the Vulkan and
// WGSL precision rules allow, not only for the round-to-nearest of the devices at hand: each kernel
// is emulated on the CPU in float32 under all four IEEE rounding directions (both specs leave the
// direction to the implementation), each plan's OpPlan::emulate with exp() pushed 2 + 2|x| ulps and
// the reciprocal one more ulp in that direction (the specs allow 3 + 2|x| and 2.5), and stores to float16 rounded in that
// direction too (bfloat16 stores round to nearest even in integer arithmetic, whatever the
// direction). Every valid case of the default sweep must pass under every direction; the worst
// error/tolerance ratio is printed (directed rounding errs up to twice round-to-nearest).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/half.h"
#include "core/runner.h"
#include "gpu/plans/emulate.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {

struct Direction {
  int mode;
  const char* name;
  bool up;  // which way exp() and the reciprocal (both positive) are pushed
};
const Direction kDirections[] = {{FE_TONEAREST, "nearest", true},
                                 {FE_UPWARD, "upward", true},
                                 {FE_DOWNWARD, "downward", false},
                                 {FE_TOWARDZERO, "toward-zero", false}};

// Stores v as dtype t rounded in direction `mode` (the store's OpFConvert has no fixed rounding).
// bfloat16 is converted by the accessors' own integer round-to-nearest-even, the same in every
// direction (reference/common.h): Tensor::set rounds the same way.
Tensor store(const std::vector<float>& v, const Shape& shape, DType t, int mode) {
  Tensor out(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const float y = v[size_t(i)];
    if (t == DType::f32 || t == DType::bf16 || !is_float(t)) {  // int8: the emulation's values are the final integers
      out.set(i, y);
      continue;
    }
    uint16_t h = f64_to_f16(y);
    const float r = f16_to_f32(h);
    const bool want_up = mode == FE_UPWARD || (mode == FE_TOWARDZERO && y < 0);
    const bool want_down = mode == FE_DOWNWARD || (mode == FE_TOWARDZERO && y > 0);
    const bool neg = h & 0x8000, zero = (h & 0x7fff) == 0;
    if ((want_up && r < y) || (want_down && r > y)) {
      const bool up = r < y;  // one step toward y
      if (zero) h = up ? 0x0001 : 0x8001;
      else h = uint16_t(up != neg ? h + 1 : h - 1);
    }
    std::memcpy(out.bytes.data() + 2 * i, &h, 2);
  }
  return out;
}

// push's integer stepping against nextafter itself, across zero, subnormals and up to infinity.
TEST(Rounding, PushStepsAsNextafterDoes) {
  for (float v : {0.0f, -0.0f, 1.0f, -1.5f, 0x1p-149f, -0x1p-140f, 3.0e38f, -3.4e38f, INFINITY})
    for (int n : {0, 1, 2, 7, 300})
      for (bool up : {true, false}) {
        float want = v;
        for (int k = 0; k < n; ++k) want = std::nextafter(want, up ? INFINITY : -INFINITY);
        const float got = push(v, n + 0.5, up);
        EXPECT_TRUE(got == want || (std::isinf(got) && got == want)) << v << " " << n << " " << up << ": " << got << " vs " << want;
      }
  EXPECT_EQ(push(1.0f, 1e30, true), INFINITY);
  EXPECT_EQ(push(1.0f, 1e30, false), -INFINITY);
  EXPECT_TRUE(std::isnan(push(NAN, 3, true)));
}

class DerivedTolerances : public ::testing::TestWithParam<std::string> {};

TEST_P(DerivedTolerances, HoldUnderEveryRoundingDirectionTheSpecsAllow) {
  const OpDef* op = find_op(GetParam());
  ASSERT_TRUE(op);
  ASSERT_TRUE(op->emulate) << op->name << " states no emulation of its kernels' arithmetic (OpPlan::emulate)";
  for (DType t : op->dtypes) {
    double worst[4] = {0, 0, 0, 0};
    int cases = 0;
    // The default sweep, less the large case: four float32 emulations of 16M elements would take
    // a minute and test no rounding that the small cases do not.
    const Sweep sweep(*op, t, 200, 1);
    const std::string large = op->large_case().id();
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Case c = sweep.at(k);
      if (c.id() == large) continue;
      Expected e = prepare(c);
      if (!e.error.empty() || e.violation) continue;
      ++cases;
      const Floats in = to_floats(e.problem.inputs);
      for (int k = 0; k < 4; ++k) {
        const Direction& dir = kDirections[k];
        std::fesetround(dir.mode);
        Floats v = op->emulate(e.problem, in, dir.up);
        std::fesetround(FE_TONEAREST);
        for (auto& [name, y] : v) {
          const Tensor& want = e.outputs.at(name);
          CompareReport r = compare(name, store(y, want.shape, t, dir.mode), want, e.tol, false);
          worst[k] = std::max(worst[k], r.worst);
          EXPECT_TRUE(r.ok()) << c.id() << " rounding " << dir.name << ": " << name << " " << r.mismatches
                              << " elements out of tolerance, first at " << r.first_bad << ": got " << r.first_got
                              << ", want " << r.first_want << ", allowed " << r.first_allowed;
        }
      }
    }
    std::printf("[ emulated ] %-12s %-8s %3d cases  worst/tol: nearest %.3g, upward %.3g, downward %.3g, toward-zero %.3g\n",
                op->name.c_str(), dtype_name(t).data(), cases, worst[0], worst[1], worst[2], worst[3]);
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const OpDef* op : all_ops()) v.push_back(op->name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, DerivedTolerances, ::testing::ValuesIn(op_names()), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
