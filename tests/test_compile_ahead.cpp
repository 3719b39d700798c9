// Compile-ahead (Backend::warm, which check calls for the cases it has prepared ahead): a case's
// kernels compile in the background before the case runs, and nothing about the run changes: the
// same outcome, and a kernel that does not compile still reports its own error, file and line.
// Each test opens its own backend without the validation layer, since Vulkan compiles nothing
// ahead under validation (its messages are blamed on the case that runs).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "core/runner.h"
#include "gpu/embedded.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tools/backends.h"

namespace ts {
namespace {

constexpr const char* kId = "rope_half/B=1,H=2,S=3,D=6,pos=5/float32/texture3d_c;cos=buffer/seed=3";

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

std::unique_ptr<Backend> open_plain(const std::string& name) {
  BackendConfig cfg;
  cfg.validation = false;
  std::string why;
  std::unique_ptr<Backend> b = open_backend(name, cfg, &why);
  if (!b && !test::missing_allowed(name)) ADD_FAILURE() << name << " UNAVAILABLE: " << why;
  return b;
}

TEST(CompileAhead, VulkanWarmCompilesBeforeTheRunAndTheRunReusesIt) {
  std::unique_ptr<Backend> opened = open_plain("vulkan");
  if (!opened) GTEST_SKIP() << "vulkan UNAVAILABLE";
  auto& vk = dynamic_cast<VulkanBackend&>(*opened);
  const Expected e = prepare(parse_case(kId));
  ASSERT_FALSE(e.violation);
  const VulkanBackend::ShaderStats before = vk.shader_stats();
  vk.warm(*e.op, e.problem);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (vk.shader_stats().pipelines == before.pipelines && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const VulkanBackend::ShaderStats warmed = vk.shader_stats();
  ASSERT_GT(warmed.compiles, before.compiles) << "warm() compiled nothing in the background";
  ASSERT_GT(warmed.pipelines, before.pipelines) << "warm() made no pipeline in the background";
  const CaseResult r = judge(e, vk);
  EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
  EXPECT_EQ(vk.shader_stats().compiles, warmed.compiles) << "the run compiled its kernel again";
  // The run uses the pipeline made ahead, not a second one (on a GPU driver, creating a pipeline is
  // the costly part).
  EXPECT_EQ(vk.shader_stats().pipelines, warmed.pipelines) << "the run created its pipeline again";
}

class CompileAheadBroken : public ::testing::TestWithParam<std::string> {};

// The run after a warm() of a kernel that does not compile reports exactly what it reports without
// one; the fixed kernel then passes (a failed compile is never cached).
TEST_P(CompileAheadBroken, KernelThatDoesNotCompileStillReportsItsLine) {
  std::unique_ptr<Backend> opened = open_plain(GetParam());
  if (!opened) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
  auto& gpu = dynamic_cast<GpuBackend&>(*opened);
  const bool vk = GetParam() == "vulkan";
  // The error is on line 3 of the kernel file in both languages.
  gpu.set_kernel_source("rope_half", vk ? "void main() {\n\n  undeclared_thing = 1;\n}\n"
                                        : "@compute @workgroup_size(WG)\nfn main() {\n  let x = ;\n}\n");
  const Expected e = prepare(parse_case(kId));
  gpu.warm(*e.op, e.problem);
  const CaseResult bad = judge(e, gpu);
  EXPECT_EQ(bad.outcome, Outcome::error) << line(bad);
  EXPECT_NE(bad.detail.find(vk ? "rope_half.comp:3" : "rope_half.wgsl:3:"), std::string::npos) << line(bad);
  gpu.set_kernel_source("rope_half", vk ? std::string(embedded("gpu/vulkan/shaders/rope_half.comp")) : "");
  gpu.warm(*e.op, e.problem);
  const CaseResult good = judge(e, gpu);
  EXPECT_EQ(good.outcome, Outcome::pass) << line(good);
}

INSTANTIATE_TEST_SUITE_P(All, CompileAheadBroken, ::testing::Values("vulkan", "webgpu"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
