#pragma once
// Suites written once and instantiated per GPU backend (IREE CTS style). A backend that cannot run
// on this machine fails the suite loudly with the reason, unless it is listed in
// TOUCHSTONE_ALLOW_MISSING (e.g. "webgpu"), which turns the failure into a visible skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "core/runner.h"
#include "gpu/gpu_backend.h"
#include "tools/backends.h"

// The sanitized pass of ci/test.sh skips, with the reason on its line, a test whose work is GPU
// sweeps the Release pass runs anyway: the host code they reach, shorter tests reach too, and under
// the sanitizers they would be much of that pass's time.
#ifdef TS_SANITIZED
#define TS_RELEASE_PASS_ONLY(why) GTEST_SKIP() << "run in the Release pass only: " << (why)
#else
#define TS_RELEASE_PASS_ONLY(why) static_cast<void>(0)
#endif

namespace ts::test {

inline bool missing_allowed(const std::string& name) {
  const char* env = std::getenv("TOUCHSTONE_ALLOW_MISSING");
  return env && std::string(env).find(name) != std::string::npos;
}

// UNSUPPORTED for a capability the device says it lacks (the tensor-core implementations on a device
// without cooperative matrices): the honest verdict there, so a test that expects PASS of every drawn
// case passes over it. Any other UNSUPPORTED is not excused.
inline bool lacks_capability(const std::string& capability, const Backend& b) {
  if (capability.empty()) return false;
  const std::vector<std::string> caps = b.info().capabilities;
  return std::find(caps.begin(), caps.end(), capability) == caps.end();
}
inline bool lacks_capability(const CaseResult& r, const Backend& b) {
  return r.outcome == Outcome::unsupported && lacks_capability(r.capability, b);
}

// One backend object per name for the whole test binary: devices and Node workers are costly to start.
// Vulkan runs with the Khronos validation layer on: any validation message fails the case.
// The cache is emptied by a gtest environment (backend_fixture.cpp) before static destruction:
// destroying a device after the driver's own statics are gone crashes at exit (seen on NVIDIA).
using BackendCache = std::map<std::string, std::pair<std::unique_ptr<Backend>, std::string>>;
BackendCache& backend_cache();

inline Backend* shared_backend(const std::string& name, std::string* why) {
  BackendCache& cache = backend_cache();
  auto it = cache.find(name);
  if (it == cache.end()) {
    BackendConfig cfg;
    cfg.validation = true;
    std::string reason;
    auto b = open_backend(name, cfg, &reason);
    it = cache.emplace(name, std::make_pair(std::move(b), reason)).first;
  }
  *why = it->second.second;
  return it->second.first.get();
}

// The suite's own device is lavapipe (llvmpipe): a CPU that compiles a pipeline at its first dispatch
// and takes more than a millisecond a case. Tests of how the gate behaves there (its committed
// profile, llvmpipe's vector width, budgets of 1 ms) skip on any other device, saying so: what they
// check is not something a GPU does. Where Vulkan does not open, the test runs and fails on that.
inline bool vulkan_is_not_lavapipe() {
  std::string why;
  const Backend* b = shared_backend("vulkan", &why);
  return b && b->info().name.find("llvmpipe") == std::string::npos;
}
#define TS_LAVAPIPE_ONLY(why) \
  if (::ts::test::vulkan_is_not_lavapipe()) GTEST_SKIP() << "lavapipe only (this Vulkan device is another): " << (why)

// A fresh GPU backend `name` (not the shared one), the packed int8 dot product on or off; null, with a
// test failure naming the reason, where it cannot open here.
inline std::unique_ptr<Backend> fresh_gpu_backend(const std::string& name, bool int_dot) {
  BackendConfig cfg;
  cfg.int_dot = int_dot;
  std::string why;
  std::unique_ptr<Backend> b = open_backend(name, cfg, &why);
  if (!dynamic_cast<GpuBackend*>(b.get())) {
    ADD_FAILURE() << name << ": " << why;
    return nullptr;
  }
  return b;
}

// A fresh backend `name` (not the shared one) whose `kernel` runs `source`, e.g. a kernel with a bug
// spliced in (tests/kernel_bugs.h); null, with the reason in *why, where it cannot open here.
inline std::unique_ptr<Backend> backend_with_kernel(const std::string& name, const std::string& kernel,
                                                    std::string source, std::string* why) {
  std::unique_ptr<Backend> b = open_backend(name, {}, why);
  if (auto* g = dynamic_cast<GpuBackend*>(b.get())) g->set_kernel_source(kernel, std::move(source));
  return b;
}

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    backend_ = shared_backend(GetParam(), &why);
    if (!backend_) {
      if (missing_allowed(GetParam())) GTEST_SKIP() << GetParam() << " UNAVAILABLE: " << why;
      FAIL() << GetParam() << " backend UNAVAILABLE on this machine: " << why
             << " (set TOUCHSTONE_ALLOW_MISSING=" << GetParam() << " to skip deliberately)";
    }
  }
  Backend& backend() { return *backend_; }

 private:
  Backend* backend_ = nullptr;
};

}  // namespace ts::test
