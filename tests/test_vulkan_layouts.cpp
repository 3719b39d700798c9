// Memory layouts on the Vulkan backend (SPEC "Layouts", gpu/ACCESSORS.md): the generated accessors
// in every layout x float dtype x ragged shape through test kernels, every operator in mixed
// per-tensor layouts (hand-picked ids and random layouts over drawn cases), the RoPE family
// bit-identical in every layout, padding lanes checked, textures past maxImageDimension3D
// UNSUPPORTED, and malformed tensor declarations named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/half.h"
#include "core/layout.h"
#include "core/runner.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"
#include "tools/sweep.h"

namespace ts {
namespace {

// A test kernel: x in, z out, one invocation per texel of z (pc.n of them); `params` adds push
// constants after n, `body` stores texel t of z.
std::string test_kernel(const std::string& params, const std::string& body) {
  return cat("\nTS_INPUT(x, 0)\nTS_OUTPUT(z, 1)\nlayout(push_constant) uniform Params { uint n;", params,
             " } pc;\nvoid main() {\n  uint t = ts_linear_id();\n  if (t >= pc.n) return;\n", body, "}\n");
}

// Every lane of z's texel from its own flat index i: `lane` (of x_at(i)); padding lanes stay 0.
std::string per_lane(const std::string& vec, const std::string& lane) {
  return cat("  ", vec, " v = ", vec, "(0);\n  for (uint j = 0u; j < 4u; ++j) {\n    uint i = z_flat(t, j);\n",
             "    if (i != TS_PADDING) v[j] = ", lane, ";\n  }\n  z_store(t, v);\n");
}

// z (a buffer: its texel holds 4 consecutive elements) = x through x_at4: at4's one-texel path
// (i % 4 == 0) and its 4-load path, in x's layout; the ragged end lane by lane.
std::string copy4(const std::string& vec) {
  return cat("  uint i = 4u * t, numel = x_numel();\n  ", vec, " v = ", vec, "(0);\n",
             "  if (i + 3u < numel) v = x_at4(i);\n  else for (uint j = 0u; i + j < numel; ++j) v[j] = x_at(i + j);\n",
             "  z_store(t, v);\n");
}

const std::string kScale = test_kernel(" float a;", per_lane("vec4", "x_at(i) * pc.a"));  // z = a*x
const std::string kCopy4 = test_kernel("", copy4("vec4"));
const std::string kScaleInt8 = test_kernel("", per_lane("ivec4", "clamp(3 * x_at(i), -128, 127)"));  // z = clamp(3*x)
const std::string kCopy4Int8 = test_kernel("", copy4("ivec4"));
// int8: every lane of z holds 90, the first int8 sentinel (0x5A), as a right answer might.
const std::string kSentinelInt8 = test_kernel("", "  z_store(t, ivec4(90));\n");

std::optional<Violation> valid(const Problem&) { return std::nullopt; }
std::vector<BufferSpec> z_like_x(const Problem& p) { return {{"z", p.inputs.at("x").shape, p.dtype}}; }
std::vector<Dispatch> texel_plan(const Problem& p) {
  const Shape& s = p.inputs.at("x").shape;
  uint64_t n = uint64_t(physical(s, p.dtype, p.layout("z")).texels);
  return {{p.params.value("kernel", "test_scale"), {}, n, {{"n", double(n)}, {"a", p.params.value("a", 2.5)}}}};
}
OpDef texel_op() {
  OpDef o;
  o.name = "texel_test";
  o.validate = valid;
  o.buffers = z_like_x;
  o.plan = texel_plan;
  return o;
}

// x[i] = (i % 17) - 8: with a = 2.5 every product is exact in float16 and bfloat16 too.
Problem texel_problem(const Shape& s, DType t, const std::string& storage, const std::string& kernel) {
  Problem p;
  p.dtype = t;
  p.storage = storage;
  Tensor x(t, s);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(i % 17) - 8);
  p.inputs["x"] = std::move(x);
  p.params = {{"kernel", kernel}};
  return p;
}

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

class VulkanLayouts : public ::testing::Test {
 protected:
  // A validating backend of its own: the tests replace kernels.
  static VulkanBackend* shared(std::string* why) {
    static std::string reason;
    static std::unique_ptr<VulkanBackend> b = [] {
      auto v = VulkanBackend::create({.validation = true}, &reason);
      if (v) {
        v->set_kernel_source("test_scale", kScale);
        v->set_kernel_source("test_copy4", kCopy4);
        v->set_kernel_source("test_scale_i8", kScaleInt8);
        v->set_kernel_source("test_copy4_i8", kCopy4Int8);
        v->set_kernel_source("test_sentinel_i8", kSentinelInt8);
        v->set_kernel_source("test_skip_i8", test::splice(kScaleInt8, "if (t >= pc.n) return;", "  if (t == 1u) return;", true));
      }
      return v;
    }();
    *why = reason;
    return b.get();
  }
  void SetUp() override {
    std::string why;
    b_ = shared(&why);
    if (!b_) {
      if (test::missing_allowed("vulkan")) GTEST_SKIP() << "vulkan UNAVAILABLE: " << why;
      FAIL() << "vulkan backend UNAVAILABLE on this machine: " << why;
    }
    b_->take_validation_messages();
  }
  void TearDown() override {
    if (b_) {
      EXPECT_EQ(b_->take_validation_messages(), std::vector<std::string>{});
    }
  }
  VulkanBackend& b() { return *b_; }
  uint32_t max_image_3d() {
    for (const std::string& c : b().info().capabilities)
      if (c.rfind("max-image-3d=", 0) == 0) return uint32_t(std::stoul(c.substr(13)));
    ADD_FAILURE() << "no max-image-3d capability";
    return 0;
  }

 private:
  VulkanBackend* b_ = nullptr;
};

const char* const kFloatLayouts[] = {"buffer", "texture3d_w", "texture3d_h", "texture3d_c"};
const DType kFloatTypes[] = {DType::f32, DType::f16, DType::bf16};

// Packed dimensions of 1, 2, 3, 5 and 4 (no padding) in every position, ranks 1 to 5 (dimensions
// before the last four fold into N).
const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {{1}, {7}, {2, 3}, {5, 1, 3}, {3, 5, 2, 4}, {2, 3, 5, 1}, {2, 2, 3, 2, 5}};
  return s;
}

TEST_F(VulkanLayouts, EveryLayoutAndDtypeReadsAndWritesEveryElementExactly) {
  OpDef o = texel_op();
  for (const Shape& s : shapes())
    for (DType t : kFloatTypes)
      for (const char* in : kFloatLayouts)
        for (const char* out : kFloatLayouts) {
          const std::string storage = cat(in, ";z=", out);
          RunOutput r = b().run(o, texel_problem(s, t, storage, "test_scale"));
          const std::string what = cat(shape_str(s), " ", dtype_name(t), " ", storage);
          ASSERT_EQ(r.status, RunOutput::Status::ok) << what << ": " << r.message;
          const Tensor& z = r.outputs.at("z");
          for (int64_t i = 0; i < z.numel(); ++i) ASSERT_EQ(z.get(i), 2.5 * (double(i % 17) - 8)) << what << " at " << i;
          EXPECT_EQ(r.guards.at("z").bad_bytes, 0) << what;
          EXPECT_EQ(r.guards.at("z").bad_padding, 0) << what;
        }
}

TEST_F(VulkanLayouts, At4ReadsFourConsecutiveElementsInEveryLayout) {
  OpDef o = texel_op();
  for (const Shape& s : shapes())
    for (DType t : kFloatTypes)
      for (const char* in : kFloatLayouts) {
        const std::string storage = cat(in, ";z=buffer");
        RunOutput r = b().run(o, texel_problem(s, t, storage, "test_copy4"));
        const std::string what = cat(shape_str(s), " ", dtype_name(t), " ", storage);
        ASSERT_EQ(r.status, RunOutput::Status::ok) << what << ": " << r.message;
        const Tensor& z = r.outputs.at("z");
        for (int64_t i = 0; i < z.numel(); ++i) ASSERT_EQ(z.get(i), double(i % 17) - 8) << what << " at " << i;
      }
}

// int8 tensors in `buffer` and the packed int8 layouts (one 32-bit word per texel), mixed: every
// element read and written exactly, packed padding lanes zero, a buffer's trailing guard untouched.
TEST_F(VulkanLayouts, Int8LayoutsReadAndWriteEveryElementExactly) {
  const char* layouts[] = {"buffer", "int8_4w", "int8_4c1w", "int8_4w4c"};
  OpDef o = texel_op();
  for (const Shape& s : shapes())
    for (const char* in : layouts)
      for (const char* out : layouts) {
        const std::string storage = cat(in, ";z=", out);
        const std::string what = cat(shape_str(s), " int8 ", storage);
        RunOutput r = b().run(o, texel_problem(s, DType::i8, storage, "test_scale_i8"));
        ASSERT_EQ(r.status, RunOutput::Status::ok) << what << ": " << r.message;
        const Tensor& z = r.outputs.at("z");
        for (int64_t i = 0; i < z.numel(); ++i) ASSERT_EQ(z.get(i), 3 * (double(i % 17) - 8)) << what << " at " << i;
        EXPECT_EQ(r.guards.at("z").bad_bytes, 0) << what;
        EXPECT_EQ(r.guards.at("z").bad_padding, 0) << what;
      }
  for (const Shape& s : shapes())
    for (const char* in : layouts) {
      RunOutput r = b().run(o, texel_problem(s, DType::i8, cat(in, ";z=buffer"), "test_copy4_i8"));
      ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
      for (int64_t i = 0; i < r.outputs.at("z").numel(); ++i)
        ASSERT_EQ(r.outputs.at("z").get(i), double(i % 17) - 8) << shape_str(s) << " " << in << " at " << i;
    }
}

// int8 poison is a legal value: an output that holds the first sentinel is run again with the
// second, and only elements holding both are unwritten (SPEC "Layouts"). A kernel that writes the
// sentinel as its answer is not flagged; one that skips a texel is, exactly there, in every layout.
TEST_F(VulkanLayouts, Int8UnwrittenElementsAreFoundByTwoSentinels) {
  OpDef o = texel_op();
  for (const char* layout : {"buffer", "int8_4w", "int8_4c1w", "int8_4w4c"}) {
    const Shape s = {2, 3, 5, 6};
    RunOutput r = b().run(o, texel_problem(s, DType::i8, cat("buffer;z=", layout), "test_sentinel_i8"));
    ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
    ASSERT_EQ(r.unwritten.count("z"), 1u) << layout << ": holding the first sentinel everywhere asks for a rerun";
    EXPECT_EQ(std::count(r.unwritten["z"].begin(), r.unwritten["z"].end(), 1), 0) << layout;

    r = b().run(o, texel_problem(s, DType::i8, cat("buffer;z=", layout), "test_skip_i8"));
    ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
    ASSERT_EQ(r.unwritten.count("z"), 1u) << layout;
    const Physical ph = physical(s, DType::i8, layout_from_name(layout));
    for (int64_t i = 0; i < numel(s); ++i) {
      int64_t t = 0;
      int lane = 0;
      ph.locate(i, t, lane);
      EXPECT_EQ(r.unwritten["z"][size_t(i)], t == 1 ? 1 : 0) << layout << " element " << i;
    }
    // A right answer that holds no sentinel costs no rerun.
    r = b().run(o, texel_problem(s, DType::i8, cat("buffer;z=", layout), "test_scale_i8"));
    EXPECT_EQ(r.unwritten.count("z"), 0u) << layout;
  }
}

// A 16-bit tensor of odd length ends in half a word: the store of its last texel must leave the
// trailing guard bytes alone, in buffers of float16 and of bfloat16 words alike.
TEST_F(VulkanLayouts, OddLength16BitBuffersKeepTheirGuardBands) {
  OpDef o = texel_op();
  for (DType t : {DType::f16, DType::bf16})
    for (int64_t n : {1, 3, 5, 7}) {
      RunOutput r = b().run(o, texel_problem({n}, t, "buffer", "test_scale"));
      ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
      EXPECT_EQ(r.guards.at("z").bad_bytes, 0) << dtype_name(t) << " [" << n << "]";
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(r.outputs.at("z").get(i), 2.5 * (double(i % 17) - 8));
    }
}

// bfloat16 stores round the float32 result to nearest, ties to even (in the preamble's integer
// rounding), overflow to infinity, and keep a NaN a NaN, in buffers and images alike. The products
// x * 2.5 are exact in float32, so the host's single rounding of them is the expected value.
TEST_F(VulkanLayouts, Bfloat16StoresRoundToNearestEvenAndKeepNaN) {
  OpDef o = texel_op();
  // 1 + 2^-7 (8 significant bits) * 2.5 = 10.1000101b: 9 bits, a tie, rounds down to the even 10.100010b.
  const double xs[] = {1.0 + 1.0 / 128, 3.0 + 1.0 / 64, -1.0 - 3.0 / 128, 1.3598e38, -1e-30, 3e38, NAN};
  for (const char* layout : {"buffer", "texture3d_w", "texture3d_c"}) {
    Problem p = texel_problem({7}, DType::bf16, layout, "test_scale");
    Tensor& x = p.inputs.at("x");
    for (int i = 0; i < 7; ++i) x.set(i, xs[i]);
    RunOutput r = b().run(o, p);
    ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
    const Tensor& z = r.outputs.at("z");
    Tensor want(DType::bf16, {7});
    for (int i = 0; i < 7; ++i) want.set(i, double(float(x.get(i)) * 2.5f));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(z.get(i), want.get(i)) << layout << " element " << i;
    EXPECT_EQ(z.get(0), 2.515625) << "the tie rounds to even";
    EXPECT_TRUE(std::isinf(z.get(3)) && std::isinf(z.get(5))) << "past bfloat16's largest finite value";
    EXPECT_TRUE(std::isnan(z.get(6))) << layout;
  }
}

// float16 stores round the float32 result to nearest, ties to even, subnormals included, overflow to
// infinity, NaN stays NaN: every float16 pattern times a scale whose products are exact in float32
// (subnormal results, ties, overflow), in a buffer (where the device has f16-rte, the device's
// conversion under RoundingModeRTE with the integer rounding for what the spec leaves open) and in
// an image (always the integer rounding).
TEST_F(VulkanLayouts, Float16StoresRoundToNearestEvenInBuffersAndImages) {
  OpDef o = texel_op();
  for (double a : {1.0, 0.125, 1.0009765625, 4096.0})
    for (const char* layout : {"buffer", "texture3d_w"}) {
      Problem p = texel_problem({256, 256}, DType::f16, layout, "test_scale");
      p.params["a"] = a;
      Tensor& x = p.inputs.at("x");
      for (uint32_t h = 0; h < 65536; ++h) std::memcpy(x.bytes.data() + 2 * h, &h, 2);  // little-endian
      RunOutput r = b().run(o, p);
      ASSERT_EQ(r.status, RunOutput::Status::ok) << r.message;
      const Tensor& z = r.outputs.at("z");
      int64_t bad = 0, first = -1;
      for (uint32_t h = 0; h < 65536; ++h) {
        const float in = f16_to_f32(uint16_t(h));
        uint16_t got;
        std::memcpy(&got, z.bytes.data() + 2 * h, 2);
        const bool ok = std::isnan(in) ? std::isnan(f16_to_f32(got)) : got == f32_to_f16(in * float(a));
        if (!ok && bad++ == 0) first = h;
      }
      EXPECT_EQ(bad, 0) << layout << " x " << a << ": first at input bits 0x" << std::hex << first;
    }
}

// Every operator in mixed per-tensor layouts, ragged packed dimensions (1, 2, 3, 5) and every dtype.
TEST_F(VulkanLayouts, MixedLayoutCasesOfEveryOperatorPass) {
  const char* ids[] = {
      "rope_llama/B=1,S=3,Hq=5,Hkv=1,D=6/bfloat16/texture3d_c;freqs_cos=buffer/seed=3",
      "rope_llama/B=2,S=2,Hq=3,Hkv=3,D=2/float16/texture3d_w;freqs_cos=buffer;xk_out=texture3d_h/seed=1",
      "rope_llama/B=1,S=5,Hq=2,Hkv=1,D=10/float32/texture3d_h;xq=buffer;freqs_sin=texture3d_c/seed=2",
      "rope_cis/B=3,N=1,C=6/float16/texture3d_c;out=texture3d_w/seed=4",
      "rope_cis/B=1,N=5,C=2,fshape=nc2_2/bfloat16/texture3d_h;freqs_cis=texture3d_w/seed=5",
      "rope_half/B=1,H=5,S=3,D=2/float32/texture3d_c/seed=6",
      "rope_half/B=2,H=1,S=2,D=6/bfloat16/texture3d_h;cos=texture3d_w;out=buffer/seed=7",
      "rope_matrix/B=1,H=2,S=3,D=6,mode=dense/float16/texture3d_w;m=texture3d_c;out=texture3d_h/seed=8",
      "rope_matrix/B=1,H=3,S=1,D=4,mode=interleave/bfloat16/texture3d_c;cos=buffer/seed=9",
      "sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5,impl=naive/float16/buffer;q=texture3d_c;k=texture3d_h;v=texture3d_w;out=texture3d_w/seed=1",
      "sdpa/S=5,Hq=4,Hkv=2,D=12,pos=0,impl=tiled/float32/buffer;q=texture3d_h;out=texture3d_w/seed=2",
      "sdpa/S=1,Hq=3,Hkv=3,D=4,pos=9,impl=tiled/float16/buffer;q=texture3d_w;k=texture3d_c;v=texture3d_h/seed=3",
  };
  for (const char* id : ids) {
    CaseResult r = judge(prepare(parse_case(id)), b());
    EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
  }
}

// A storage part drawing each declared tensor's layout at random from what the operator allows.
std::string random_storage(const OpDef& op, std::mt19937_64& rng) {
  std::string s = "buffer";
  for (auto& [tensor, allowed] : op.layouts) s += cat(";", tensor, "=", allowed[rng() % allowed.size()]);
  return s;
}

// Drawn valid cases of every operator and dtype, each in random per-tensor layouts: PASS, and the
// RoPE family's outputs are bit-identical to the same case in buffers (same arithmetic, other
// addressing); sdpa's too, as its kernels compute each element by the same expression in every layout.
TEST_F(VulkanLayouts, RandomLayoutsOverDrawnCasesPassBitIdenticalToBuffers) {
  std::mt19937_64 rng(2026);
  int cases = 0;
  for (const OpDef* op : all_ops()) {
    if (op->layouts.empty()) continue;
    for (DType t : op->dtypes)
      for (int k = 0; k < 8; ++k) {
        Case c = draw_case(*op, t, true, 500 + uint64_t(k), 5 * k);
        CaseResult base = judge(prepare(c), b());
        if (base.outcome == Outcome::rejected || test::lacks_capability(base, b())) continue;
        ASSERT_EQ(base.outcome, Outcome::pass) << line(base);
        c.storage = random_storage(*op, rng);
        CaseResult r = judge(prepare(c), b());
        if (r.outcome == Outcome::unsupported) continue;  // an extent past this device's images
        if (r.outcome == Outcome::rejected && r.rule == "packed_dim_compatible") continue;  // a storage q8ta_add refuses
        EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
        EXPECT_EQ(r.digests, base.digests) << c.id() << " differs from its buffer run";
        ++cases;
      }
  }
  EXPECT_GT(cases, 80);
}

// The padding lanes of a texture output must read zero: a kernel that stores garbage there (around
// the accessor, which zeroes them) fails with the count of padding lanes, though every element is right.
TEST_F(VulkanLayouts, GarbageInPaddingLanesIsAFailNamingThem) {
  std::string why;
  auto broken = VulkanBackend::create({.validation = true}, &why);
  ASSERT_TRUE(broken) << why;
  broken->set_kernel_source(
      "rope_half", test::with_bug("gpu/vulkan/shaders/rope_half.comp", "out_store(t, v);", test::kGarbageInPaddingOfOut, true));
  // out [1,2,3,6] width-packed: 6 rows of 2 texels, the second holding 2 elements and 2 padding lanes.
  CaseResult r = judge(prepare(parse_case("rope_half/B=1,H=2,S=3,D=6/float32/buffer;out=texture3d_w/seed=1")), *broken);
  ASSERT_EQ(r.outcome, Outcome::fail) << line(r);
  EXPECT_EQ(r.guards.at("out").bad_padding, 12) << line(r);
  EXPECT_EQ(r.guards.at("out").first_bad_texel, 1) << line(r);
  EXPECT_NE(r.detail.find("12 padding lanes not zero (first in texel 1 of its texture3d_w layout)"), std::string::npos)
      << r.detail;
  for (const CompareReport& rep : r.reports) EXPECT_TRUE(rep.ok()) << "every element is right: only padding shows it";
  EXPECT_EQ(broken->take_validation_messages(), std::vector<std::string>{});
  // The shipped kernel in the same case passes.
  CaseResult ok = judge(prepare(parse_case("rope_half/B=1,H=2,S=3,D=6/float32/buffer;out=texture3d_w/seed=1")), b());
  EXPECT_EQ(ok.outcome, Outcome::pass) << line(ok);
}

TEST_F(VulkanLayouts, ExtentPastMaxImageDimension3DIsUnsupportedWithTheNumbers) {
  const uint32_t max = max_image_3d();
  ASSERT_GT(max, 0u);
  const int64_t D = (int64_t(max) + 2) & ~int64_t(1);  // even, past the limit
  uint64_t allocations = b().allocations;
  CaseResult r = judge(prepare(parse_case(cat("rope_half/B=1,H=1,S=1,D=", D, "/float32/buffer;x=texture3d_c/seed=1"))), b());
  ASSERT_EQ(r.outcome, Outcome::unsupported) << line(r);
  EXPECT_NE(r.detail.find(cat("extent x = ", D, " is outside [1, ", max, "] (maxImageDimension3D)")), std::string::npos)
      << r.detail;
  EXPECT_EQ(r.capability, "") << "a limit, not a capability a device profile could require";
  EXPECT_EQ(b().allocations, allocations) << "refused before anything was allocated";
  // Width-packed, the same tensor fits (ceil(D/4) texels wide).
  CaseResult w = judge(prepare(parse_case(cat("rope_half/B=1,H=1,S=1,D=", D, "/float32/buffer;x=texture3d_w/seed=1"))), b());
  EXPECT_EQ(w.outcome, Outcome::pass) << line(w);
}

// Programs are compiled per storage kind (buffer or image) and dtype of the declared tensors, never
// per shape, nor per texture packing: that is read from ts_meta (gpu/vulkan/accessors.h).
TEST_F(VulkanLayouts, ProgramsAreCachedPerStorageKindNotPerShapeOrPacking) {
  b().set_kernel_source("test_cached", kScale + "// a text of its own\n");
  OpDef o = texel_op();
  auto run = [&](const Shape& s, const std::string& storage) {
    RunOutput r = b().run(o, texel_problem(s, DType::f32, storage, "test_cached"));
    ASSERT_EQ(r.status, RunOutput::Status::ok) << storage << ": " << r.message;
    for (int64_t i = 0; i < r.outputs.at("z").numel(); ++i)
      ASSERT_EQ(r.outputs.at("z").get(i), 2.5 * (double(i % 17) - 8)) << storage << " at " << i;
  };
  const uint64_t start = b().shader_stats().compiles;
  run({3, 5}, "texture3d_h;z=texture3d_c");
  EXPECT_EQ(b().shader_stats().compiles, start + 1);
  run({7, 2, 9}, "texture3d_h;z=texture3d_c");
  run({3, 5}, "texture3d_w;z=texture3d_h");
  run({2, 3, 5, 1}, "texture3d_c;z=texture3d_w");
  EXPECT_EQ(b().shader_stats().compiles, start + 1) << "a shape or a texture packing compiled again";
  run({3, 5}, "texture3d_h;z=buffer");
  EXPECT_EQ(b().shader_stats().compiles, start + 2) << "a buffer z is another program";
}

// A tensor whose data a kernel never touches still has its dims in ts_meta (the compiler may drop
// its resource): z = numel(x) + dims(x).x.
TEST_F(VulkanLayouts, DimsOfATensorWhoseDataIsUnusedAreThere) {
  b().set_kernel_source("test_dims_only", R"(
TS_INPUT(x, 0)
TS_OUTPUT(z, 1)
layout(push_constant) uniform Params { uint n; } pc;
void main() {
  uint t = ts_linear_id();
  if (t < pc.n) z_store(t, vec4(float(x_numel() + x_dims().x)));
}
)");
  OpDef o = texel_op();
  for (const char* storage : {"buffer", "texture3d_c;z=buffer", "texture3d_w"}) {
    RunOutput r = b().run(o, texel_problem({2, 3, 5}, DType::f32, storage, "test_dims_only"));
    ASSERT_EQ(r.status, RunOutput::Status::ok) << storage << ": " << r.message;
    for (int64_t i = 0; i < 30; ++i) ASSERT_EQ(r.outputs.at("z").get(i), 35.0) << storage << " at " << i;
  }
}

// Declarations the backend cannot honour are ERRORs naming the kernel and the line.
TEST_F(VulkanLayouts, MalformedDeclarationsAreErrorsNamingTheLine) {
  OpDef o = texel_op();
  struct Bad {
    std::string source, want;
  } bad[] = {
      {"\nTS_INPUT(x)\nTS_OUTPUT(z, 1)\nvoid main() {}\n", "line 2: a tensor declaration is TS_INPUT(name, binding)"},
      {"\nTS_INPUT(x, 0)\nTS_OUTPUT(z, 16)\nvoid main() {}\n", "line 3: binding 16 is not below 16"},
      {"\nTS_INPUT(x, 1)\nTS_OUTPUT(z, 1)\nvoid main() {}\n", "line 3: binding 1 is taken by 'x'"},
      {"\nTS_INPUT(nope, 0)\nTS_OUTPUT(z, 1)\nvoid main() {}\n", "binds tensor 'nope' (TS_INPUT(nope, 0) at line 2)"},
      // A plain array for a tensor the case holds as an image.
      {"\nlayout(std430, binding = 0) readonly buffer X { float x[]; };\nTS_OUTPUT(z, 1)\n"
       "void main() { z_store(0u, vec4(x[0])); }\n",
       "binds tensor 'x' (binding 0) as a storage buffer, but the case holds it as texture3d_h (declare it with TS_INPUT"},
      // A compile error after the declarations keeps the kernel's own line number.
      {"\nTS_INPUT(x, 0)\nTS_OUTPUT(z, 1)\nvoid main() { z_store(0u, vec4(undeclared_thing)); }\n", "test_bad.comp:4"},
  };
  for (const Bad& k : bad) {
    b().set_kernel_source("test_bad", k.source);
    RunOutput r = b().run(o, texel_problem({3, 5}, DType::f32, "texture3d_h;z=buffer", "test_bad"));
    EXPECT_EQ(r.status, RunOutput::Status::error) << k.want;
    EXPECT_NE(r.message.find(k.want), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("test_bad"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace ts
