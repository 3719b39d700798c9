// q8ta_conv2d on every GPU backend (issue 12), one suite instantiated per backend: the default sweep
// passes with every implementation; general and im2col agree bit for bit wherever both apply, on the
// dot-product and the scalar path; impl=auto is the implementation SPEC's rule picks, bit for bit;
// a 1x1, stride-1, unpadded conv is q8ta_linear on the pixels, bit for bit. Broken kernels, each
// caught by a property, shrunk, and reproduced from the printed id: im2col padding with 0 instead
// of the input zero point, and a general kernel that takes the group's index for its first channel.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "gpu/plans/registry.h"
#include "tests/q8ta_fixture.h"
#include "tests/shrink_bug.h"
#include "tools/sweep.h"

namespace ts {
namespace {

using test::line;

const OpDef& conv_op() { return *find_op("q8ta_conv2d"); }

bool im2col_applies(const Case& c) { return c.get("groups", 1) == 1 && c.get("C_in") % 4 == 0; }

class Q8taConv2d : public test::Q8ta {
 protected:
  // Valid drawn cases of the default generator, `count` of them that `keep` accepts.
  template <class Keep>
  std::vector<Case> drawn(int count, Keep keep) {
    std::vector<Case> out;
    for (uint64_t k = 0; k < 2000 && int(out.size()) < count; ++k) {
      Case c = draw_case(conv_op(), DType::i8, true, 700 + k, int(k % 60) + 10);
      if (keep(c)) out.push_back(std::move(c));
    }
    EXPECT_EQ(int(out.size()), count);
    return out;
  }
};

// What `touchstone check --op q8ta_conv2d` runs: 200 cases, seed 1. Every valid case PASSes, every
// invalid one is REJECTED with the reference's rule, and both implementations run.
TEST_P(Q8taConv2d, DefaultSweepPasses) {
  const SweepTally t = default_sweep(conv_op());
  std::map<std::string, int> ran = t.passed;
  EXPECT_GT(ran["q8ta_conv2d_general"], 50) << testing::PrintToString(ran);
  EXPECT_GT(ran["q8ta_conv2d_im2col + q8ta_conv2d_gemm"], 20) << testing::PrintToString(ran);
  EXPECT_GT(t.rejected, 30);
}

// Where im2col applies, it and the sliding window compute one function: the same output bytes, on
// the dot-product path where it runs and on the scalar path.
TEST_P(Q8taConv2d, GeneralAndIm2colAgreeBitForBit) {
  for (Case c : drawn(30, im2col_applies)) {
    std::map<std::string, uint64_t> first;
    for (Backend* b : {&dot(), &scalar()})
      for (const char* impl : {"general", "im2col"}) {
        c.set("impl", std::string(impl));
        const CaseResult r = judge(prepare(c), *b);
        ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
        if (first.empty()) first = r.digests;
        else EXPECT_EQ(r.digests, first) << c.id() << " " << b->kind() << " " << impl;
      }
  }
}

// impl=auto runs the implementation SPEC's rule names (im2col iff groups = 1 and C_in % 4 == 0; the
// rule restated here, not taken from the reference), with its very bytes.
TEST_P(Q8taConv2d, AutoIsTheImplementationItChose) {
  int im2col = 0;
  for (Case c : drawn(40, [](const Case&) { return true; })) {
    const std::string chosen = im2col_applies(c) ? "im2col" : "general";
    im2col += chosen == "im2col";
    c.set("impl", std::string("auto"));
    const CaseResult a = judge(prepare(c), dot());
    c.set("impl", chosen);
    const CaseResult b = judge(prepare(c), dot());
    ASSERT_EQ(a.outcome, Outcome::pass) << line(a);
    ASSERT_EQ(b.outcome, Outcome::pass) << line(b);
    EXPECT_EQ(a.kernels, b.kernels) << c.id();
    EXPECT_EQ(a.kernels.find(chosen) != std::string::npos, true) << c.id() << " ran " << a.kernels;
    EXPECT_EQ(a.digests, b.digests) << c.id();
  }
  EXPECT_GT(im2col, 5);
  EXPECT_LT(im2col, 35);
}

// A 1x1, stride-1, unpadded conv of x [N, C_in, H, W] is q8ta_linear of the pixels x' [N*H*W, C_in]
// by weight [C_out, C_in] with the same quantization: the same int8 values, bit for bit (both
// implementations, and q8ta_linear tiled, in the layouts drawn).
TEST_P(Q8taConv2d, PointwiseConvIsLinearOnThePixels) {
  const OpDef& linear = *find_op("q8ta_linear");
  int compared = 0;
  auto pointwise = [](const Case& c) {
    return c.get("groups", 1) == 1 && c.get("KH") == 1 && c.get("KW") == 1;
  };
  for (Case c : drawn(12, pointwise)) {
    for (const char* key : {"sh", "sw", "ph", "pw", "dh", "dw"}) std::erase_if(c.vars, [&](auto& kv) { return kv.first == key; });
    c.set("impl", std::string(im2col_applies(c) ? "im2col" : "general"));
    const Expected e = prepare(c);
    const CaseResult r = judge(e, dot());
    ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
    const Tensor &x = e.problem.inputs.at("x"), &w = e.problem.inputs.at("weight");
    const int64_t N = x.shape[0], C = x.shape[1], HW = x.shape[2] * x.shape[3], Co = w.shape[0];
    Problem lp;
    lp.dtype = DType::i8;
    lp.storage = "buffer;out=int8_4w4c;x=int8_4w4c";
    lp.inputs = e.problem.inputs;
    lp.inputs["weight"].shape = {Co, C};
    Tensor& px = lp.inputs["x"] = Tensor(DType::i8, {N * HW, C});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t p = 0; p < HW; ++p) px.bytes[size_t((n * HW + p) * C + ch)] = x.bytes[size_t((n * C + ch) * HW + p)];
    for (const char* key : {"input_scale", "input_zero_point", "output_scale", "output_zero_point"})
      lp.params[key] = e.problem.params.at(key);
    lp.params["impl"] = "tiled";
    ASSERT_FALSE(linear.validate(lp)) << linear.validate(lp)->message;
    const RunOutput lo = dot().run(linear, lp);
    ASSERT_EQ(lo.status, RunOutput::Status::ok) << lo.message;
    // The conv's output as PASSed, [N, C_out, H, W], against the linear one, [N*H*W, C_out].
    const RunOutput co = dot().run(conv_op(), e.problem);
    ASSERT_EQ(co.status, RunOutput::Status::ok) << co.message;
    const Tensor &a = co.outputs.at("out"), &b = lo.outputs.at("out");
    int64_t differ = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < Co; ++o)
        for (int64_t p = 0; p < HW; ++p) differ += a.bytes[size_t((n * Co + o) * HW + p)] != b.bytes[size_t((n * HW + p) * Co + o)];
    EXPECT_EQ(differ, 0) << c.id();
    ++compared;
  }
  EXPECT_EQ(compared, 12);
}

// ---- Broken kernels, shrunk and reproduced ----

struct Bug {
  std::string name, kernel;
  test::LangSplices splice;
};

const std::vector<Bug>& bugs() {
  static const std::vector<Bug> b = {
      // Padding taps hold 0 instead of the input zero point: x_zp * w enters the sum at every
      // padded tap. Only padded cases with x_zp != 0 through im2col can show it.
      {"im2col_pads_with_zero", "q8ta_conv2d_im2col",
       {{"v[j] = inside ? x_at(", "    if (!inside) v[j] = 0;  // BUG", true},
        {"if (inside) { v[j] = x_at(", "    if (!inside) { v[j] = 0; }  // BUG", true}}},
      // The group's index taken for its first input channel (g instead of g * Cg): right for
      // groups = 1 and depthwise (Cg = 1), wrong for groups > 1 with Cg > 1.
      {"general_group_channel_offset", "q8ta_conv2d_general",
       {{"uint c0 = (co / pc.Cog) * pc.Cg;", "  c0 = co / pc.Cog;  // BUG", true},
        {"var c0 = (co / pc.Cog) * pc.Cg;", "  c0 = co / pc.Cog;  // BUG", true}}},
  };
  return b;
}

TEST_P(Q8taConv2d, BrokenKernelsAreCaughtShrunkAndReproduced) {
  for (const Bug& bug : bugs()) {
    SCOPED_TRACE(bug.name);
    auto b = broken({{bug.kernel, bug.splice}});
    ASSERT_TRUE(b);
    const std::string id = test::shrunk_failure(*b, conv_op().generator(conv_op(), DType::i8, true));
    ASSERT_FALSE(id.empty()) << bug.name << " was not caught";
    const Case shrunk = Case::parse(id);
    const CaseResult r = judge(prepare(shrunk), *b);
    ASSERT_EQ(r.outcome, Outcome::fail) << line(r);
    if (bug.name == "im2col_pads_with_zero") {
      EXPECT_NE(r.kernels.find("q8ta_conv2d_im2col"), std::string::npos) << line(r);
      EXPECT_TRUE(shrunk.get("ph", 0) > 0 || shrunk.get("pw", 0) > 0) << id;
      EXPECT_NE(shrunk.get("x_zp", 0), 0) << id;
    } else {
      EXPECT_EQ(r.kernels, "q8ta_conv2d_general") << line(r);
      EXPECT_GT(shrunk.get("groups", 1), 1) << id;
      EXPECT_GT(shrunk.get("C_in") / shrunk.get("groups", 1), 1) << id;
    }
    test::expect_reproduces(id, *b);
    EXPECT_EQ(judge(prepare(shrunk), dot()).outcome, Outcome::pass) << "the shipped kernel passes " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Q8taConv2d, ::testing::Values("vulkan", "webgpu"), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
