// The GLSL and WGSL twins kept in step: on the same cases, Vulkan and WebGPU give the same bytes
// wherever the arithmetic is exact — int8 outputs whose bound allows no difference (power-of-two
// scales, or no element near a rounding boundary), and the exact copies (sdpa's cache updates) —
// and both stay within the bound elsewhere. A twin that drifts (a rounding mode, an index, a clamp
// changed in one language) fails here even where each alone would pass its own cases.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/runner.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tools/sweep.h"

namespace ts::test {
namespace {

// The outputs of `e` that must come out bit for bit: exact copies (the reference holds them in
// their own dtype), and integer outputs whose every element's allowance is 0.
std::vector<std::string> exact_outputs(const Expected& e) {
  std::vector<std::string> out;
  for (const auto& [name, want] : e.outputs) {
    if (is_float(want.dtype) && want.dtype != DType::f64) {
      out.push_back(name);
    } else if (!is_float(want.dtype) && e.tol.atol == 0 && e.tol.rtol == 0) {
      const Tensor* b = e.tol.bound(name);
      const std::vector<double> v = b ? b->values() : std::vector<double>{};
      if (std::all_of(v.begin(), v.end(), [](double d) { return d == 0; })) out.push_back(name);
    }
  }
  return out;
}

TEST(Twins, VulkanAndWebGpuAgreeBitForBitWhereTheArithmeticIsExact) {
  std::string why_v, why_w;
  Backend* vk = shared_backend("vulkan", &why_v);
  Backend* wg = shared_backend("webgpu", &why_w);
  if (!vk || !wg) {
    if (missing_allowed("vulkan") || missing_allowed("webgpu")) GTEST_SKIP() << why_v << why_w;
    FAIL() << "both Touchstone backends must run here: " << why_v << " " << why_w;
  }
  int64_t compared = 0, exact = 0;
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      const Sweep sweep(*op, t, 24, 7);
      for (int64_t k = 0; k < sweep.size(); ++k) {
        const Case c = sweep.at(k);
        if (k == sweep.large_index()) continue;  // seconds of reference for one index check
        const Expected e = prepare(c);
        if (e.violation || !e.error.empty()) continue;
        const CaseResult a = judge(e, *vk), b = judge(e, *wg);
        if (a.outcome == Outcome::unsupported || b.outcome == Outcome::unsupported) continue;
        EXPECT_EQ(a.outcome, Outcome::pass) << c.id() << " on vulkan: " << a.detail;
        EXPECT_EQ(b.outcome, Outcome::pass) << c.id() << " on webgpu: " << b.detail;
        ++compared;
        for (const std::string& name : exact_outputs(e)) {
          EXPECT_EQ(a.digests.at(name), b.digests.at(name)) << c.id() << ": " << name << " differs between the twins";
          ++exact;
        }
      }
    }
  std::cout << "[ twins    ] " << compared << " cases on both backends, " << exact << " outputs compared bit for bit\n";
  EXPECT_GT(exact, 100);  // the comparison has something to compare
}

}  // namespace
}  // namespace ts::test
