// Timeouts as a busy CI runner meets them, on both backends: a case whose work does not finish in
// time is an ERROR and the sweep goes on (a new device, a fresh Dawn worker), case after case,
// without corrupting memory (ci/test.sh runs these under ASan too); and a slow compile is not a
// slow kernel: it has its own budget, and exceeding that says so.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <sys/wait.h>

#include "core/runner.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tools/backends.h"

namespace ts {
namespace {

struct Exit {
  int code = -1;
  std::string out;
};

// The touchstone binary through the shell (stdout and stderr together).
Exit touchstone(const std::string& args) {
  Exit r;
  const std::string cmd = std::string(TS_BINARY_DIR) + "/touchstone " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// A Vulkan backend with these budgets (0: the default compile budget).
std::unique_ptr<Backend> vulkan(uint32_t timeout_ms, uint32_t compile_timeout_ms = 0) {
  BackendConfig cfg;
  cfg.timeout_ms = timeout_ms;
  if (compile_timeout_ms) cfg.compile_timeout_ms = compile_timeout_ms;
  std::string why;
  auto b = open_backend("vulkan", cfg, &why);
  EXPECT_TRUE(b) << why;
  return b;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The repro (a double free in the replacement of a timed-out device): a kernel timeout of
// 1 ms and a compile budget of 1 ms time out most cases of two operators, each abandoning its
// device. The run must end with a verdict: exit 1, ERROR rows, the table printed.
TEST(Timeouts, VulkanSweepOfTimedOutCasesEndsWithAVerdict) {
  TS_LAVAPIPE_ONLY("a GPU runs these cases within 1 ms: nothing times out");
  const Exit e = touchstone("check --op rope_llama,sdpa --dtype float32 --backend vulkan --timeout-ms 1 "
                            "--compile-timeout-ms 1 --cases 12 --quiet");
  EXPECT_EQ(e.code, 1) << e.out;
  EXPECT_NE(e.out.find("sdpa/vulkan/float32"), std::string::npos) << e.out;
  EXPECT_GE(count(e.out, "the next run uses a new device"), 1u) << e.out;
}

// WebGPU: a request of shaders the worker ran before gets 1 ms, so most time out and kill the
// worker; the next case starts a fresh one (whose shaders are new again: the compile budget).
TEST(Timeouts, WebGpuSweepOfTimedOutCasesEndsWithAVerdict) {
  const Exit e = touchstone("check --op sdpa --dtype float32 --backend webgpu --timeout-ms 1 "
                            "--compile-timeout-ms 20000 --cases 12 --quiet");
  EXPECT_TRUE(e.code == 0 || e.code == 1) << e.out;
  EXPECT_NE(e.out.find("sdpa/webgpu/float32"), std::string::npos) << e.out;
}

// A pipeline's first dispatch on lavapipe compiles it inside the queue's work: with a kernel
// timeout of 1 ms that compile alone would time out, but it runs on the compile budget.
TEST(Timeouts, FirstDispatchCompileRunsOnTheCompileBudget) {
  TS_LAVAPIPE_ONLY("a GPU driver compiles when the pipeline is made, not at its first dispatch");
  auto b = vulkan(1);
  ASSERT_TRUE(b);
  const CaseResult r = judge(prepare(Case::parse("sdpa/S=3,Hq=4,Hkv=2,D=16,pos=5/float32/buffer/seed=3")), *b);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.detail;
  EXPECT_GE(b->pipelines_new.load(), 1u);
}

// Past the compile budget too, the ERROR names the budget rather than blaming the kernel alone.
TEST(Timeouts, ExceededCompileBudgetIsReportedAsSuch) {
  TS_LAVAPIPE_ONLY("a GPU driver may compile and run the case within the budget");
  auto b = vulkan(1, 1);
  ASSERT_TRUE(b);
  // Large enough that no device compiles and runs it within 2 ms.
  const CaseResult r = judge(prepare(Case::parse("sdpa/S=64,Hq=8,Hkv=2,D=64,pos=200/float32/buffer/seed=3")), *b);
  ASSERT_EQ(r.outcome, Outcome::error) << r.detail;
  EXPECT_NE(r.detail.find("compile budget of 1 ms"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace ts
