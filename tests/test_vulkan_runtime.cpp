// The Vulkan runtime on its own, with kernels injected by the tests: binding by name, push constants,
// dtypes, folded grids, multi-dispatch plans, and every way a run can fail (compile error, missing
// uniform or tensor, timeout), each as an ERROR that names the culprit; a kernel needing what the
// backend cannot check or the device lacks (a capability, shared memory) is UNSUPPORTED up front.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <cstdio>
#include <iostream>

#include <spirv_cross/spirv.h>

#include "gpu/vulkan/compiler.h"
#include "gpu/vulkan/context.h"
#include "gpu/vulkan/roll_loops.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "tests/backend_fixture.h"

namespace ts {
namespace {

// out = a*x + y. With small integer x and half-integer y every product and sum is exact in float16
// and float32 alike, so results compare exactly whether or not the device fuses into an FMA.
constexpr const char* kAxpy = R"(
layout(std430, binding = 0) readonly buffer XBuf { DTYPE x[]; };
layout(std430, binding = 1) readonly buffer YBuf { DTYPE y[]; };
layout(std430, binding = 2) writeonly buffer ZBuf { DTYPE z[]; };
layout(push_constant) uniform Params { uint n; float a; } pc;
void main() {
  uint i = ts_linear_id();
  if (i < pc.n) z[i] = DTYPE(pc.a) * x[i] + y[i];
}
)";

// dst = src * a, bound through Dispatch::bind.
constexpr const char* kScale = R"(
layout(std430, binding = 0) readonly buffer SrcBuf { DTYPE src[]; };
layout(std430, binding = 1) writeonly buffer DstBuf { DTYPE dst[]; };
layout(push_constant) uniform Params { uint n; float a; } pc;
void main() {
  uint i = ts_linear_id();
  if (i < pc.n) dst[i] = src[i] * DTYPE(pc.a);
}
)";

constexpr const char* kIota = R"(
layout(std430, binding = 0) writeonly buffer ZBuf { int z[]; };
layout(push_constant) uniform Params { uint n; } pc;
void main() {
  uint i = ts_linear_id();
  if (i < pc.n) z[i] = int(i);
}
)";

// A float recurrence the compiler cannot fold: pc.n iterations keep one invocation busy.
constexpr const char* kSpin = R"(
layout(std430, binding = 0) writeonly buffer ZBuf { float z[]; };
layout(push_constant) uniform Params { uint n; } pc;
void main() {
  float acc = 0.0;
  for (uint i = 0u; i < pc.n; ++i) acc = acc * 0.999 + 1.0;
  if (ts_linear_id() == 0u) z[0] = acc;
}
)";

constexpr const char* kBroken = R"(
layout(std430, binding = 0) buffer ZBuf { float z[]; };
void main() { z[0] = undeclared_thing; }
)";

void register_kernels(VulkanBackend& b) {
  b.set_kernel_source("test_axpy", kAxpy);
  b.set_kernel_source("test_scale", kScale);
  b.set_kernel_source("test_iota", kIota);
  b.set_kernel_source("test_spin", kSpin);
  b.set_kernel_source("test_broken", kBroken);
}

// Problems carry the test's knobs in params: n, a, kernel, and what to leave out of the plan.
Problem axpy_problem(int64_t n, DType t, Params extra = Params::object()) {
  Problem p;
  p.dtype = t;
  Tensor x(t, {n}), y(t, {n});
  for (int64_t i = 0; i < n; ++i) {
    x.set(i, double(i % 17) - 8);
    y.set(i, double(i % 5) * 0.5);
  }
  p.inputs["x"] = std::move(x);
  p.inputs["y"] = std::move(y);
  p.params = {{"n", n}, {"a", 2.5}};
  p.params.update(extra);
  return p;
}

double expected_axpy(int64_t i) { return 2.5 * (double(i % 17) - 8) + double(i % 5) * 0.5; }

std::optional<Violation> valid(const Problem&) { return std::nullopt; }

std::vector<BufferSpec> z_like_x(const Problem& p) {
  const Tensor& x = p.inputs.at("x");
  return {{"z", x.shape, p.params.value("z_dtype", "") == "int32" ? DType::i32 : x.dtype}};
}

Dispatch dispatch(const Problem& p, const std::string& kernel) {
  Dispatch d;
  d.kernel = kernel;
  d.invocations = p.params["n"].get<uint64_t>();
  d.uniforms = {{"n", double(d.invocations)}, {"a", p.params["a"].get<double>()}};
  return d;
}

OpDef op(const char* name, std::vector<Dispatch> (*plan)(const Problem&),
         std::vector<BufferSpec> (*buffers)(const Problem&) = z_like_x) {
  OpDef o;
  o.name = name;
  o.validate = valid;
  o.buffers = buffers;
  o.plan = plan;
  return o;
}

// One kernel named by params.kernel, its uniforms overridden by params.uniforms, minus params.drop,
// its tensors remapped by params.bind.
std::vector<Dispatch> single_plan(const Problem& p) {
  Dispatch d = dispatch(p, p.params.value("kernel", "test_axpy"));
  Params overrides = p.params.value("uniforms", Params::object());
  for (auto& [name, value] : overrides.items()) d.uniforms[name] = value;
  if (p.params.contains("drop")) d.uniforms.erase(p.params["drop"].get<std::string>());
  if (p.params.contains("bind")) d.bind = p.params["bind"].get<std::map<std::string, std::string>>();
  return {d};
}

// z = (x * a) * 2 through a scratch buffer: the second dispatch reads what the first wrote.
std::vector<BufferSpec> z_and_scratch(const Problem& p) {
  std::vector<BufferSpec> b = z_like_x(p);
  b.push_back({"tmp", b[0].shape, b[0].dtype, BufferSpec::Role::scratch});
  return b;
}
// Two test_scale dispatches: dst = src * a, then dst = src * 2, each with its own tensors.
std::vector<Dispatch> two_scales(const Problem& p, const char* src1, const char* dst1, const char* src2, const char* dst2) {
  Dispatch first = dispatch(p, "test_scale"), second = first;
  first.bind = {{"src", src1}, {"dst", dst1}};
  second.bind = {{"src", src2}, {"dst", dst2}};
  second.uniforms["a"] = 2;
  return {first, second};
}
std::vector<Dispatch> two_step_plan(const Problem& p) { return two_scales(p, "x", "tmp", "tmp", "z"); }

// z = x * a and w = x * 2, the second dispatch beside the first (Dispatch::concurrent): they share x only.
std::vector<BufferSpec> z_and_w(const Problem& p) {
  std::vector<BufferSpec> b = z_like_x(p);
  b.push_back({"w", b[0].shape, b[0].dtype});
  return b;
}
std::vector<Dispatch> side_by_side_plan(const Problem& p) {
  std::vector<Dispatch> v = two_scales(p, "x", "z", "x", "w");
  v[1].concurrent = true;
  return v;
}

bool has_capability(const Backend& b, const std::string& cap) {
  auto caps = b.info().capabilities;
  return std::find(caps.begin(), caps.end(), cap) != caps.end();
}

std::unique_ptr<VulkanBackend> open(const VulkanOptions& o, std::string* why) {
  auto b = VulkanBackend::create(o, why);
  if (b) register_kernels(*b);
  return b;
}

class VulkanRuntime : public ::testing::Test {
 protected:
  // One validating backend for the suite: instance and device creation cost tens of milliseconds.
  static VulkanBackend* shared(std::string* why) {
    static std::string reason;
    static std::unique_ptr<VulkanBackend> b = open({.validation = true}, &reason);
    *why = reason;
    return b.get();
  }
  void SetUp() override {
    std::string why;
    b_ = shared(&why);
    if (!b_) {
      if (test::missing_allowed("vulkan")) GTEST_SKIP() << "vulkan UNAVAILABLE: " << why;
      FAIL() << "vulkan backend UNAVAILABLE on this machine: " << why
             << " (set TOUCHSTONE_ALLOW_MISSING=vulkan to skip deliberately)";
    }
    b_->take_validation_messages();
  }
  void TearDown() override {
    if (b_) {
      EXPECT_EQ(b_->take_validation_messages(), std::vector<std::string>{});
    }
  }
  VulkanBackend& b() { return *b_; }

 private:
  VulkanBackend* b_ = nullptr;
};

void expect_axpy(const RunOutput& r, int64_t n) {
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  const Tensor& z = r.outputs.at("z");
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z.get(i), expected_axpy(i)) << "at " << i;
  EXPECT_EQ(r.guards.at("z").bad_bytes, 0);
}

TEST_F(VulkanRuntime, DescribesTheDevice) {
  DeviceInfo i = b().info();
  EXPECT_EQ(i.backend, "vulkan");
  EXPECT_FALSE(i.name.empty());
  std::string all;
  for (auto& c : i.capabilities) all += c + " ";
  for (const char* want : {"api=", "driver=", "subgroup-size=", "max-workgroups=", "max-workgroup-invocations=",
                           "max-storage-buffer=", "validation"})
    EXPECT_NE(all.find(want), std::string::npos) << want << " missing from: " << all;
  std::cout << "[ device ] " << i.name << ": " << all << "\n";
}

TEST_F(VulkanRuntime, AxpyFloat32IsExact) {
  uint64_t allocations = b().allocations, dispatches = b().dispatches;
  OpDef o = op("axpy", single_plan);
  expect_axpy(b().run(o, axpy_problem(1000, DType::f32)), 1000);
  EXPECT_GE(b().allocations, allocations + 3);  // x, y, z
  EXPECT_EQ(b().dispatches, dispatches + 1);
}

TEST_F(VulkanRuntime, AxpyFloat16IsExact) {
  if (!has_capability(b(), "shader-f16"))
    GTEST_SKIP() << b().info().name << " lacks storageBuffer16BitAccess or shaderFloat16";
  OpDef o = op("axpy", single_plan);
  expect_axpy(b().run(o, axpy_problem(999, DType::f16)), 999);  // odd: the last word is half guard
}

// Empty tensors still get (non-empty) buffers; their host bytes are never copied from or to: an
// empty vector's data() may be null, and memcpy from null is undefined even for 0 bytes (UBSan
// reported it on every zero-size case before).
TEST_F(VulkanRuntime, EmptyTensorsRunClean) {
  OpDef o = op("axpy", single_plan);
  RunOutput r = b().run(o, axpy_problem(0, DType::f32));
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  EXPECT_EQ(r.outputs.at("z").numel(), 0);
  EXPECT_EQ(r.guards.at("z").bad_bytes, 0);
}

TEST_F(VulkanRuntime, SecondDispatchReadsTheFirstsOutput) {
  OpDef o = op("scale_twice", two_step_plan, z_and_scratch);
  RunOutput r = b().run(o, axpy_problem(777, DType::f32));
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  for (int64_t i = 0; i < 777; ++i) ASSERT_EQ(r.outputs["z"].get(i), (double(i % 17) - 8) * 5) << "at " << i;
  EXPECT_EQ(r.outputs.count("tmp"), 0u);  // scratch is never an output
  const ScratchReport& tmp = r.scratch.at("tmp");
  EXPECT_EQ(tmp.unwritten, 0);
  EXPECT_EQ(tmp.first_kernel, "test_scale");
  EXPECT_EQ(r.guards.at("tmp").bad_bytes, 0);
}

TEST_F(VulkanRuntime, ConcurrentDispatchesSharingOnlyAnInputBothRun) {
  OpDef o = op("side_by_side", side_by_side_plan, z_and_w);
  RunOutput r = b().run(o, axpy_problem(777, DType::f32));
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  for (int64_t i = 0; i < 777; ++i) {
    ASSERT_EQ(r.outputs["z"].get(i), (double(i % 17) - 8) * 2.5) << "at " << i;
    ASSERT_EQ(r.outputs["w"].get(i), (double(i % 17) - 8) * 2) << "at " << i;
  }
}

// Without the barrier the second dispatch could read tmp half written: the plan is refused, naming
// both kernels and the tensor, before any buffer exists.
TEST_F(VulkanRuntime, ConcurrentDispatchReadingTheOneBeforesOutputIsAnError) {
  uint64_t allocations = b().allocations;
  OpDef o = op("scale_twice_at_once", [](const Problem& p) {
    std::vector<Dispatch> v = two_step_plan(p);
    v[1].concurrent = true;
    return v;
  }, z_and_scratch);
  RunOutput r = b().run(o, axpy_problem(777, DType::f32));
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("test_scale runs beside test_scale"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("tensor 'tmp'"), std::string::npos) << r.message;
  EXPECT_EQ(b().allocations, allocations);
}

// Scratch is judged right after the first dispatch that binds it, not at the end of the plan: here
// that dispatch writes only the first half of tmp, and the second dispatch then writes all of it.
std::vector<Dispatch> half_then_whole_plan(const Problem& p) {
  std::vector<Dispatch> v = two_step_plan(p);  // tmp = x * a, z = tmp * 2
  Dispatch half = v[0];
  half.invocations /= 2;
  half.uniforms["n"] = double(half.invocations);
  v.insert(v.begin(), half);
  return v;
}

TEST_F(VulkanRuntime, ScratchUnwrittenByItsFirstWriterIsCountedEvenIfLaterOverwritten) {
  OpDef o = op("half_scratch", half_then_whole_plan, z_and_scratch);
  RunOutput r = b().run(o, axpy_problem(777, DType::f32));
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  const ScratchReport& tmp = r.scratch.at("tmp");
  EXPECT_EQ(tmp.first_kernel, "test_scale");
  EXPECT_EQ(tmp.unwritten, 777 - 388);
  EXPECT_EQ(tmp.first_unwritten, 388);
  for (int64_t i = 0; i < 777; ++i) ASSERT_EQ(r.outputs["z"].get(i), (double(i % 17) - 8) * 5) << "at " << i;
}

TEST_F(VulkanRuntime, FoldedGridWritesEveryElement) {
  // 70,000 workgroups of one invocation: over the 65,535 per-dimension limit, so folded into y.
  constexpr int64_t n = 70000;
  b().set_workgroup_size(1);
  OpDef o = op("iota", single_plan);
  RunOutput r = b().run(o, axpy_problem(n, DType::f32, {{"kernel", "test_iota"}, {"z_dtype", "int32"}}));
  b().set_workgroup_size(64);
  ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
  const Tensor& z = r.outputs.at("z");
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z.get(i), double(i)) << "at " << i;
  EXPECT_EQ(r.guards.at("z").bad_bytes, 0);
}

TEST_F(VulkanRuntime, CompileErrorIsAnErrorWithTheCompilerLog) {
  OpDef o = op("broken", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"kernel", "test_broken"}}));
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("test_broken"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("undeclared_thing"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("test_broken.comp:3"), std::string::npos) << "line within the kernel: " << r.message;
}

TEST_F(VulkanRuntime, MissingUniformIsAnErrorNamingIt) {
  OpDef o = op("axpy", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"drop", "a"}}));
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("push constant 'a'"), std::string::npos) << r.message;
}

TEST_F(VulkanRuntime, UnknownTensorIsAnErrorNamingIt) {
  uint64_t allocations = b().allocations;
  OpDef o = op("axpy", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"bind", {{"y", "nope"}}}}));
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("tensor 'nope'"), std::string::npos) << r.message;
  EXPECT_EQ(b().allocations, allocations);  // caught before any buffer exists
}

TEST_F(VulkanRuntime, CompiledKernelsAreCached) {
  OpDef o = op("axpy", single_plan);
  expect_axpy(b().run(o, axpy_problem(64, DType::f32)), 64);
  auto before = b().shader_stats();
  constexpr int kRuns = 50;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) ASSERT_EQ(b().run(o, axpy_problem(64, DType::f32)).status, RunOutput::Status::ok);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / kRuns;
  auto after = b().shader_stats();
  EXPECT_EQ(after.compiles, before.compiles);
  EXPECT_EQ(after.cache_hits, before.cache_hits + kRuns);
  EXPECT_EQ(after.pipelines, before.pipelines);
  std::cout << "[ timing ] one-dispatch case, validation on: " << ms << " ms per run\n";
}

// Devices that compile at their first dispatch get every loop marked DontUnroll: a hint, so
// nothing else in the module may change.
TEST(VulkanCompiler, RolledLoopsChangeOnlyTheLoopControls) {
  const std::string text = R"(#version 450
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { float x[]; };
void main() {
  float a[4];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) a[i] = x[i];
  for (uint i = 0u; i < 4u; ++i) x[i] = a[3u - i];
  [[dependency_infinite]] for (uint i = 0u; i < 2u; ++i) x[i] += 1.0;
})";
  const std::vector<uint32_t> spirv = vk::compile_compute({{"loops.comp", text}}, "loops");
  const std::vector<uint32_t> rolled = vk::with_loops_rolled(spirv);
  ASSERT_EQ(rolled.size(), spirv.size());
  int loops = 0, changed = 0;
  for (size_t at = 5; at < spirv.size(); at += spirv[at] >> 16) {
    const bool merge = (spirv[at] & 0xFFFF) == SpvOpLoopMerge;
    for (size_t w = at; w < at + (spirv[at] >> 16); ++w) {
      if (merge && w == at + 3) continue;
      EXPECT_EQ(rolled[w], spirv[w]) << "word " << w;
    }
    if (!merge) continue;
    ++loops;
    const uint32_t control = rolled[at + 3];
    EXPECT_EQ(control & SpvLoopControlUnrollMask, 0u) << "loop " << loops;
    EXPECT_NE(control & SpvLoopControlDontUnrollMask, 0u) << "loop " << loops;
    EXPECT_EQ(control & SpvLoopControlDependencyInfiniteMask, spirv[at + 3] & SpvLoopControlDependencyInfiniteMask);
    changed += control != spirv[at + 3];
  }
  EXPECT_EQ(loops, 3);
  EXPECT_EQ(changed, 3);
  std::vector<uint32_t> broken = spirv;
  broken[5] &= 0xFFFF;  // an instruction of 0 words
  EXPECT_THROW(vk::with_loops_rolled(broken), std::runtime_error);
  broken[5] |= 0xFFFFu << 16;  // past the end
  EXPECT_THROW(vk::with_loops_rolled(broken), std::runtime_error);
}

TEST(VulkanDevices, SelectorWithoutMatchListsTheDevices) {
  std::string why;
  std::vector<std::string> devices = VulkanBackend::list_devices(&why);
  if (devices.empty()) {
    if (test::missing_allowed("vulkan")) GTEST_SKIP() << "vulkan UNAVAILABLE: " << why;
    FAIL() << "no Vulkan device: " << why;
  }
  EXPECT_EQ(devices[0].rfind("0: ", 0), 0u) << devices[0];
  EXPECT_EQ(VulkanBackend::create({.device = "no-such-gpu-xyz"}, &why), nullptr);
  EXPECT_NE(why.find("no-such-gpu-xyz"), std::string::npos) << why;
  EXPECT_NE(why.find(devices[0]), std::string::npos) << why;
  EXPECT_NE(VulkanBackend::create({.device = "0"}, &why), nullptr) << why;
}

TEST_F(VulkanRuntime, ValidationMessageMakesTheCaseAnError) {
  // A zero-initialised shared variable needs shaderZeroInitializeWorkgroupMemory, which the backend
  // never enables: drivers run the kernel anyway, only the validation layer objects. (Not an
  // out-of-limits kernel: on NVIDIA those lose the device; and no capability the backend refuses.)
  b().set_kernel_source("test_zero_shared", R"(
#extension GL_EXT_null_initializer : require
layout(std430, binding = 0) buffer ZBuf { float z[]; };
shared float s = {};
void main() { z[0] = s; }
)");
  OpDef o = op("zero_shared", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"kernel", "test_zero_shared"}}));
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("shaderZeroInitializeWorkgroupMemory"), std::string::npos) << r.message;
  EXPECT_EQ(b().take_validation_messages(), std::vector<std::string>{}) << "reported in the case, not kept";
}

// 64-bit buffer atomics (capability Int64Atomics) used to reach the driver and end as a validation
// ERROR; the capability is not on the backend's allowlist, so the case is UNSUPPORTED, naming it.
TEST_F(VulkanRuntime, Int64AtomicsAreUnsupportedNotAValidationError) {
  b().set_kernel_source("test_atomic64", R"(
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(std430, binding = 0) buffer ZBuf { uint64_t z[]; };
void main() { atomicAdd(z[0], 1ul); }
)");
  OpDef o = op("atomic64", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"kernel", "test_atomic64"}, {"z_dtype", "int32"}}));
  EXPECT_EQ(r.status, RunOutput::Status::unsupported) << r.message;
  EXPECT_NE(r.message.find("SPIR-V capability Int64Atomics"), std::string::npos) << r.message;
}

// GL_ARB_shader_clock declares SPIR-V capability ShaderClockKHR, which the backend has no feature
// check for: refused before any pipeline or buffer exists, so no validation message either.
TEST_F(VulkanRuntime, CapabilityOffTheAllowlistIsUnsupportedNamingIt) {
  b().set_kernel_source("test_clock", R"(
#extension GL_ARB_shader_clock : require
layout(std430, binding = 0) writeonly buffer ZBuf { uint z[]; };
layout(push_constant) uniform Params { uint n; } pc;
void main() {
  uint i = ts_linear_id();
  if (i < pc.n) z[i] = clock2x32ARB().x;
}
)");
  uint64_t allocations = b().allocations;
  OpDef o = op("clock", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"kernel", "test_clock"}, {"z_dtype", "int32"}}));
  EXPECT_EQ(r.status, RunOutput::Status::unsupported) << r.message;
  EXPECT_NE(r.message.find("SPIR-V capability ShaderClockKHR (5055)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("test_clock"), std::string::npos) << r.message;
  EXPECT_EQ(b().allocations, allocations);
}

// Known capabilities are checked against the device's features; the reason names both.
TEST(VulkanCapabilities, AllowlistedCapabilityMissingOnTheDeviceNamesItAndTheFeature) {
  vk::Adapter a;  // a device with no optional features at all
  std::snprintf(a.props.deviceName, sizeof a.props.deviceName, "%s", "bare-device");
  EXPECT_EQ(a.missing_for(SpvCapabilityShader), "");
  EXPECT_EQ(a.missing_for(SpvCapabilityFloat16), "needs SPIR-V capability Float16 (shaderFloat16), which bare-device lacks");
  EXPECT_NE(a.missing_for(SpvCapabilityGroupNonUniformArithmetic).find("GroupNonUniformArithmetic (subgroup arithmetic)"),
            std::string::npos);
  a.features.float16 = true;
  a.features.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  EXPECT_EQ(a.missing_for(SpvCapabilityFloat16), "");
  EXPECT_EQ(a.missing_for(SpvCapabilityGroupNonUniformArithmetic), "");
  // Not on the allowlist: refused whatever the device has, named by SPIRV-Tools.
  EXPECT_NE(a.missing_for(SpvCapabilityAtomicFloat32AddEXT).find("AtomicFloat32AddEXT (6033)"), std::string::npos);
  EXPECT_EQ(vk::capability_name(SpvCapabilityShaderClockKHR), "ShaderClockKHR");
  EXPECT_EQ(vk::capability_name(987654), "capability 987654");
}

// On NVIDIA a kernel over maxComputeSharedMemorySize loses the device; here it never reaches it.
TEST_F(VulkanRuntime, SharedMemoryOverTheDeviceLimitIsUnsupportedWithTheNumbers) {
  b().set_kernel_source("test_shared", R"(
layout(std430, binding = 0) writeonly buffer ZBuf { float z[]; };
layout(push_constant) uniform Params { uint n; } pc;
shared float big[1048576];  // 4 MiB: past every device's limit
shared vec4 small[16];
void main() {
  uint i = ts_linear_id();
  big[gl_LocalInvocationID.x] = 1.0;
  small[gl_LocalInvocationID.x % 16] = vec4(2.0);
  barrier();
  if (i < pc.n) z[i] = big[0] + small[0].x;
}
)");
  OpDef o = op("shared", single_plan);
  RunOutput r = b().run(o, axpy_problem(4, DType::f32, {{"kernel", "test_shared"}}));
  EXPECT_EQ(r.status, RunOutput::Status::unsupported) << r.message;
  EXPECT_NE(r.message.find("declares 4194560 bytes of shared memory"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("maxComputeSharedMemorySize"), std::string::npos) << r.message;
}

// Runs test_spin for `iterations` and returns how long the case took.
double spin_ms(Backend& b, uint64_t iterations, RunOutput* r = nullptr) {
  OpDef spin = op("spin", single_plan);
  Problem p = axpy_problem(1, DType::f32, {{"kernel", "test_spin"}, {"uniforms", Params::object({{"n", iterations}})}});
  auto t0 = std::chrono::steady_clock::now();
  RunOutput out = b.run(spin, p);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r || out.status == RunOutput::Status::ok) << out.message;
  if (r) *r = std::move(out);
  return ms;
}

TEST_F(VulkanRuntime, HungKernelIsAnErrorAndTheNextRunWorks) {
  // Calibrated to about 0.6 s of spinning on this device: far past the 50 ms limit, yet finite, so
  // that teardown drains it (within kDrainNs, 2 s) instead of leaking the device, which LeakSanitizer
  // reports. At 1.2 s a sanitized build beside a compile (four busy threads on two cores) spun past
  // the 2 s and leaked; 0.6 s leaves a factor of 3 for the machine to slow down after calibrating.
  constexpr uint64_t kProbe = 1'000'000;
  spin_ms(b(), kProbe);  // compiles
  uint64_t iterations = uint64_t(kProbe * 600 / std::max(spin_ms(b(), kProbe), 1.0));

  std::string why;
  auto fast = open({.timeout_ms = 50}, &why);
  ASSERT_TRUE(fast) << why;
  spin_ms(*fast, 1);  // its first dispatch on this device compiles, on the compile budget
  RunOutput r;
  double ms = spin_ms(*fast, iterations, &r);
  EXPECT_EQ(r.status, RunOutput::Status::error);
  EXPECT_NE(r.message.find("did not finish within 50 ms"), std::string::npos) << r.message;
  EXPECT_LT(ms, 800) << "the fence wait must give up at the timeout, not when the kernel ends";

  OpDef o = op("axpy", single_plan);
  expect_axpy(fast->run(o, axpy_problem(100, DType::f32)), 100);
}

// Cases run at once (check's lanes, VulkanBackend::concurrency) share the device's one queue: a
// case queued behind a kernel that does not finish must not be blamed for it. It waits until that
// case's device is abandoned and runs again on the new one.
TEST_F(VulkanRuntime, ACaseQueuedBehindAHungKernelRunsAgainOnTheNewDevice) {
  constexpr uint64_t kProbe = 1'000'000;
  spin_ms(b(), kProbe);
  const uint64_t iterations = uint64_t(kProbe * 1500 / std::max(spin_ms(b(), kProbe), 1.0));
  std::string why;
  auto two = open({.timeout_ms = 300, .lanes = 2}, &why);
  ASSERT_TRUE(two) << why;
  EXPECT_EQ(two->concurrency(), 2u);
  OpDef o = op("axpy", single_plan);
  spin_ms(*two, 1);  // both kernels compiled before the race
  expect_axpy(two->run(o, axpy_problem(100, DType::f32)), 100);

  RunOutput hung;
  std::thread spinning([&] { spin_ms(*two, iterations, &hung); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the spin is on the queue
  RunOutput behind = two->run(o, axpy_problem(100, DType::f32));
  spinning.join();
  EXPECT_EQ(hung.status, RunOutput::Status::error);
  EXPECT_NE(hung.message.find("did not finish within 300 ms"), std::string::npos) << hung.message;
  expect_axpy(std::move(behind), 100);
}

}  // namespace
}  // namespace ts
