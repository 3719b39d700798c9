#pragma once
// The fixture of the int8 suites (test_q8ta_backends.cpp, test_q8ta_conv2d.cpp), instantiated once per
// GPU backend: the shared backend (packed dot product where the device has it), its scalar twin
// (int_dot off), fresh backends with a bug spliced into one kernel per language, and the default
// sweep judged on the shared one.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "gpu/gpu_backend.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"
#include "tools/sweep.h"

namespace ts::test {

inline std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

inline bool has_cap(const Backend& b, const std::string& cap) {
  const auto caps = b.info().capabilities;
  return std::find(caps.begin(), caps.end(), cap) != caps.end();
}

// A bug as one line spliced next to an anchor, in each language's kernel.
struct Splice {
  std::string anchor, line;
  bool after;
};
struct LangSplices {
  Splice glsl, wgsl;
};

class Q8ta : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    dot_ = test::shared_backend(GetParam(), &why);
    if (!dot_) {
      if (test::missing_allowed(GetParam())) GTEST_SKIP() << GetParam() << " UNAVAILABLE: " << why;
      FAIL() << GetParam() << " backend UNAVAILABLE on this machine: " << why
             << " (set TOUCHSTONE_ALLOW_MISSING=" << GetParam() << " to skip deliberately)";
    }
    // The scalar twin (int_dot off), kept in the fixture's cache like the shared one.
    auto& cache = test::backend_cache();
    const std::string key = GetParam() + " int_dot=false";
    auto it = cache.find(key);
    if (it == cache.end()) {
      BackendConfig cfg;
      cfg.validation = true;
      cfg.int_dot = false;
      std::string reason;
      it = cache.emplace(key, std::make_pair(open_backend(GetParam(), cfg, &reason), reason)).first;
    }
    scalar_ = it->second.first.get();
    ASSERT_NE(scalar_, nullptr) << it->second.second;
  }
  Backend& dot() { return *dot_; }
  Backend& scalar() { return *scalar_; }
  // Every case of `touchstone check --op <op>` (200 cases, seed 1) judged on dot(): each valid case
  // must PASS, each invalid one be REJECTED with the reference's rule. Counts what did, the passing
  // cases per kernels they ran.
  struct SweepTally {
    std::map<std::string, int> passed;
    int rejected = 0;
    int pass() const {
      int n = 0;
      for (auto& [kernels, count] : passed) n += count;
      return n;
    }
  };
  SweepTally default_sweep(const OpDef& op) {
    SweepTally t;
    const Sweep sweep(op, DType::i8, 200, 1);
    for (int64_t k = 0; k < sweep.size(); ++k) {
      const Expected e = prepare(sweep.at(k));
      EXPECT_TRUE(e.error.empty()) << e.c.id() << ": " << e.error;
      const CaseResult r = judge(e, dot());
      if (e.violation) {
        EXPECT_EQ(r.outcome, Outcome::rejected) << line(r);
        EXPECT_EQ(r.rule, e.violation->rule) << line(r);
        t.rejected += r.outcome == Outcome::rejected;
      } else if (!test::lacks_capability(r, dot())) {
        EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
        if (r.outcome == Outcome::pass) ++t.passed[r.kernels];
      }
    }
    return t;
  }
  void require_dot() {
    if (!has_cap(dot(), "int8-dot-product"))
      GTEST_SKIP() << GetParam() << " has no packed integer dot product here: "
                   << testing::PrintToString(dot().info().capabilities);
  }
  // A fresh backend of this kind whose `kernel` has the bug spliced in (the shared ones keep the
  // shipped kernels).
  std::unique_ptr<GpuBackend> broken(const std::map<std::string, LangSplices>& bugs, bool int_dot = true) {
    std::unique_ptr<Backend> b = test::fresh_gpu_backend(GetParam(), int_dot);
    auto* g = dynamic_cast<GpuBackend*>(b.get());
    if (!g) return nullptr;
    const bool vk = GetParam() == "vulkan";
    for (auto& [kernel, s] : bugs) {
      const Splice& sp = vk ? s.glsl : s.wgsl;
      const std::string path = vk ? cat("gpu/vulkan/shaders/", kernel, ".comp") : cat("gpu/webgpu/shaders/", kernel, ".wgsl");
      g->set_kernel_source(kernel, test::with_bug(path, sp.anchor, sp.line, sp.after));
    }
    b.release();
    return std::unique_ptr<GpuBackend>(g);
  }

 private:
  Backend* dot_ = nullptr;
  Backend* scalar_ = nullptr;
};

}  // namespace ts::test
