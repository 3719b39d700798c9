// The tensor-core implementations (impl=coopmat: q8ta_linear's int8 GEMM, sdpa's float16 flash
// attention). They run only where the device has cooperative matrices (an NVIDIA GPU, ci/gpu); here
// they must still compile and reflect (lavapipe never builds them otherwise, so a kernel broken for
// the GPU would go unseen), and every backend without them must say UNSUPPORTED, naming the
// capability, before any allocation.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <utility>

#include <spirv_cross/spirv.h>

#include "core/runner.h"
#include "gpu/kernel_source.h"
#include "gpu/plans/registry.h"
#include "gpu/vulkan/programs.h"
#include "gpu/webgpu/accessors.h"
#include "gpu/webgpu/webgpu_backend.h"
#include "gpu/webgpu/wgsl_reflect.h"
#include "tests/backend_fixture.h"

namespace ts {
namespace {

struct CoopmatKernel {
  const char* id;      // a case of the impl, the kernel's plan
  const char* kernel;  // its cooperative-matrix dispatch
};
const CoopmatKernel kKernels[] = {
    {"q8ta_linear/M=5,K=70,N=9,impl=coopmat/int8/buffer/seed=2", "q8ta_linear_coopmat"},        // 32x32 tiles
    {"q8ta_linear/M=2048,K=48,N=1024,impl=coopmat/int8/buffer/seed=2", "q8ta_linear_coopmat"},  // 64x64 tiles
    {"sdpa/S=3,Hq=4,Hkv=2,D=20,pos=5,impl=coopmat/float16/buffer/seed=2", "sdpa_flash_coopmat"},
};

// A kernel's case, its problem and the kernel's dispatch in the case's plan (none: the plan has no such dispatch).
struct Planned {
  Case c;
  Problem p;
  Dispatch d;
  // A tensor's dtype: an input's own, else (an output) the case's.
  DType dtype_of(const std::string& name) const { return p.inputs.count(name) ? p.inputs.at(name).dtype : c.dtype; }
};
std::optional<Planned> planned(const CoopmatKernel& k) {
  const Case c = parse_case(k.id);
  const Problem p = prepare(c).problem;
  for (Dispatch& d : named_op(c.op).plan(p))
    if (d.kernel == k.kernel) return Planned{c, p, std::move(d)};
  return std::nullopt;
}

// Each compiles with glslang 12 (GL_NV_cooperative_matrix), reflects (Debian's SPIRV-Cross does not
// parse the cooperative-matrix instructions: gpu/vulkan/reflect.cpp shows it a view without them)
// and declares the capability the device check looks for.
TEST(Coopmat, KernelsCompileAndReflectWithoutADevice) {
  KernelSources sources(".comp");
  vk::Programs programs;
  programs.sources = &sources;
  for (const CoopmatKernel& k : kKernels) {
    const std::optional<Planned> pk = planned(k);
    ASSERT_TRUE(pk) << k.id << " plans no " << k.kernel;
    const Dispatch& d = pk->d;
    EXPECT_TRUE(d.cooperative_matrix) << k.kernel;
    const vk::Program* prog = nullptr;
    ASSERT_NO_THROW(prog = &programs.get(d, pk->c.dtype, [&](const vk::AccessorDecl& decl, const std::string&) {
      return vk::TensorForm{Layout::buffer, pk->dtype_of(bound_tensor(d, decl.name))};
    })) << k.kernel;
    const auto& caps = prog->reflection.capabilities;
    EXPECT_NE(std::find(caps.begin(), caps.end(), SpvCapabilityCooperativeMatrixNV), caps.end()) << k.kernel;
    EXPECT_GE(prog->reflection.buffers.size(), 3u) << k.kernel;
  }
}

// Dawn builds a subgroup-matrix kernel only for a device that has the feature, so here the WGSL
// kernels cannot compile; their interface still can be checked against the plan: each expands with
// the case's tensors, every binding is a tensor of the case, and every uniform is one the plan sets
// (a mismatch would otherwise first show on the GPU machine).
TEST(Coopmat, WgslKernelsBindWhatThePlanGives) {
  KernelSources sources(".wgsl");
  for (const CoopmatKernel& k : kKernels) {
    const std::optional<Planned> pk = planned(k);
    ASSERT_TRUE(pk) << k.id << " plans no " << k.kernel;
    const Case& c = pk->c;
    const Problem& p = pk->p;
    const OpDef& op = named_op(c.op);
    const Dispatch& d = pk->d;
    ASSERT_TRUE(sources.has(k.kernel)) << "no " << k.kernel << ".wgsl";
    auto is_tensor = [&](const std::string& name) {
      return p.inputs.count(name) || std::find(op.outputs.begin(), op.outputs.end(), name) != op.outputs.end();
    };
    const KernelText text = sources.get(k.kernel);
    const std::vector<webgpu::TensorDecl> decls = webgpu::tensor_decls(text.text, text.file);
    std::vector<webgpu::TensorForm> forms;
    for (const webgpu::TensorDecl& t : decls) {
      const std::string name = bound_tensor(d, t.name);
      ASSERT_TRUE(is_tensor(name)) << k.kernel << " declares " << t.name << " for " << name << ", not a tensor of " << k.id;
      forms.push_back({p.layout(name), pk->dtype_of(name)});
    }
    const webgpu::Expansion e = webgpu::expand(text.text, decls, forms);
    const std::string code = WebGpuBackend::preamble(c.dtype, true, d.subgroup != 0, d.cooperative_matrix, d.defines, true) +
                             webgpu::accessor_library(true) + e.functions + e.kernel;
    const webgpu::WgslResources res = webgpu::reflect_wgsl(code, text.file);
    EXPECT_NE(code.find("enable chromium_experimental_subgroup_matrix;"), std::string::npos) << k.kernel;
    for (const webgpu::StorageBinding& b : res.storage) {
      if (b.array == "ts_meta") continue;  // the accessors' own
      EXPECT_TRUE(is_tensor(bound_tensor(d, b.array))) << k.kernel << " binds " << b.array << ", not a tensor of " << k.id;
    }
    ASSERT_TRUE(res.uniform) << k.kernel;
    for (const webgpu::UniformMember& m : res.uniform->members)
      EXPECT_TRUE(d.uniforms.count(m.name)) << k.kernel << " reads uniform " << m.name << ", which the plan does not set";
  }
}

// The kernels number their subgroups (8 of 32 a workgroup, each its own matrices' rows): a device
// whose subgroups are another size, or may be, cannot run them, although 64 lanes would hold two runs
// of 32 for a kernel that only shuffles. UNSUPPORTED, naming both sizes, not a wrong answer.
TEST(Coopmat, KernelsRunOnlyInSubgroupsOfExactlyTheirSize) {
  for (const CoopmatKernel& k : kKernels) {
    const std::optional<Planned> pk = planned(k);
    ASSERT_TRUE(pk) << k.id << " plans no " << k.kernel;
    Dispatch d = pk->d;
    EXPECT_TRUE(d.whole_subgroups) << k.kernel;
    ASSERT_EQ(d.subgroup, 32u) << k.kernel;
    DeviceLimits lim;
    lim.subgroup = 32;
    EXPECT_EQ(subgroup_gap(d, lim), "") << k.kernel;
    lim.subgroup_max = 32;
    EXPECT_EQ(subgroup_gap(d, lim), "") << k.kernel;
    for (auto [least, most] : {std::pair{64u, 0u}, {16u, 32u}, {32u, 64u}, {8u, 8u}, {0u, 0u}}) {
      lim.subgroup = least, lim.subgroup_max = most;
      const std::string gap = subgroup_gap(d, lim);
      EXPECT_NE(gap.find(least ? "exactly 32 invocations; the device's subgroups are " : "no subgroup shuffle"), std::string::npos)
          << k.kernel << " in subgroups of " << least << ".." << most << ": \"" << gap << "\"";
      if (most > least) {
        EXPECT_NE(gap.find(cat(least, " to ", most)), std::string::npos) << gap;
      }
      d.whole_subgroups = false;  // shuffles alone run in any multiple of 32
      EXPECT_EQ(subgroup_gap(d, lim).empty(), least >= 32) << least << ".." << most;
      d.whole_subgroups = true;
    }
  }
}

class CoopmatBackends : public test::BackendTest {};

// Where the backend has no cooperative matrices the case is UNSUPPORTED with the capability named;
// where it has them, the case runs and passes, unless its language has no such kernel yet: UNSUPPORTED
// naming the kernel's file.
TEST_P(CoopmatBackends, UnsupportedNamesTheCapabilityElsePasses) {
  const auto caps = backend().info().capabilities;
  const bool has = std::find(caps.begin(), caps.end(), "cooperative-matrix") != caps.end();
  const std::string ext = GetParam() == std::string("vulkan") ? ".comp" : ".wgsl";
  for (const CoopmatKernel& k : kKernels) {
    CaseResult r = judge(prepare(parse_case(k.id)), backend());
    if (has && !KernelSources(ext).has(k.kernel)) {
      EXPECT_EQ(r.outcome, Outcome::unsupported) << k.id << ": " << r.detail;
      EXPECT_NE(r.detail.find(cat("no ", k.kernel, ext, " yet")), std::string::npos) << r.detail;
      EXPECT_EQ(r.capability, cat("kernel:", k.kernel, ext)) << r.detail;
    } else if (has) {
      EXPECT_EQ(r.outcome, Outcome::pass) << k.id << ": " << r.detail;
    } else {
      EXPECT_EQ(r.outcome, Outcome::unsupported) << k.id << ": " << r.detail;
      EXPECT_EQ(r.capability, "cooperative-matrix") << k.id << ": " << r.detail;
      EXPECT_NE(r.detail.find("cooperative matri"), std::string::npos) << r.detail;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CoopmatBackends, ::testing::Values("vulkan", "webgpu"));

}  // namespace
}  // namespace ts
