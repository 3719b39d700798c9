// The RoPE kernels' buffer fast path (every tensor a buffer, known when compiling: NAME_is_buffer,
// gpu/ACCESSORS.md) against their general path, on each backend: the same logical case gives the
// same output bits with every tensor in a buffer (fast path) as with one tensor in a texture (the
// accessors' path), in every dtype; and the fast path is what runs for buffers only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/runner.h"
#include "gpu/gpu_backend.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"

namespace ts {
namespace {

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

struct Shape {
  std::string op, vars, general;  // general: a storage with one tensor in a texture
};

// Shapes the fast path takes (rope_llama, rope_half: D % 8 == 0; rope_cis: N*C/2 even; rope_matrix:
// D % 4 == 0), several rows and positions, GQA for rope_llama.
const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {"rope_llama", "B=2,S=3,Hq=4,Hkv=2,D=16,pos=5,tables=random", "buffer;xk_out=texture3d_w"},
      {"rope_half", "B=2,H=3,S=5,D=16,tables=random", "buffer;cos=texture3d_w"},
      {"rope_cis", "B=2,N=5,C=8,tables=random", "buffer;freqs_cis=texture3d_h"},
      {"rope_matrix", "B=1,H=3,S=2,D=8,mode=dense", "buffer;m=texture3d_c"},
  };
  return s;
}

class RopeFastPath : public test::BackendTest {
 protected:
  CaseResult run(const Shape& s, const std::string& dtype, const std::string& storage) {
    return judge(prepare(parse_case(cat(s.op, "/", s.vars, "/", dtype, "/", storage, "/seed=21"))), backend());
  }
  std::string kernel_path(const std::string& op) const {
    return GetParam() == "vulkan" ? cat("gpu/vulkan/shaders/", op, ".comp") : cat("gpu/webgpu/shaders/", op, ".wgsl");
  }
};

TEST_P(RopeFastPath, BitIdenticalToTheGeneralPath) {
  for (const Shape& s : shapes())
    for (const char* dtype : {"float32", "float16", "bfloat16"}) {
      if (std::string(dtype) == "bfloat16" && s.op != "rope_llama") continue;  // the same conversions as float32's
      CaseResult fast = run(s, dtype, "buffer"), general = run(s, dtype, s.general);
      ASSERT_EQ(fast.outcome, Outcome::pass) << line(fast);
      ASSERT_EQ(general.outcome, Outcome::pass) << line(general);
      EXPECT_EQ(fast.digests, general.digests) << fast.id << " differs from " << general.id;
    }
}

// A fast path that stores nothing: the all-buffer case fails with every element unwritten, the
// case with one texture passes. So the cases above compare the two paths, not one path twice.
TEST_P(RopeFastPath, RunsForAllBufferCasesOnly) {
  auto* gpu = dynamic_cast<GpuBackend*>(&backend());
  ASSERT_NE(gpu, nullptr);
  const bool vk = GetParam() == "vulkan";
  for (const Shape& s : shapes()) {
    // A line inside each kernel's fast path; the return goes before it.
    const std::string anchor = s.op == "rope_llama" ? "fast_texel(is_q, u, D, H);"
                               : s.op == "rope_half" ? (vk ? "vec4 r = d0 < hd ? -x_texel" : "if (d0 < hd) { r = -x_texel")
                               : s.op == "rope_cis"  ? (vk ? "vec4 x = x_texel(t), f" : "let x = x_texel(t);")
                                                     : "out_store(t, x_texel(t)";
    const char* id = s.op == "rope_llama" ? "u" : "t";  // the invocation's texel there
    gpu->set_kernel_source(s.op, test::with_bug(kernel_path(s.op), anchor,
                                                cat("if (", id, " < 0xFFFFFFFFu) ", vk ? "return;" : "{ return; }",
                                                    "  // BUG: nothing stored"),
                                                false));
    CaseResult fast = run(s, "float32", "buffer"), general = run(s, "float32", s.general);
    gpu->set_kernel_source(s.op, "");
    EXPECT_EQ(fast.outcome, Outcome::fail) << line(fast);
    ASSERT_FALSE(fast.reports.empty()) << line(fast);
    EXPECT_EQ(fast.reports[0].unwritten, fast.reports[0].count) << line(fast);
    EXPECT_EQ(general.outcome, Outcome::pass) << line(general);
  }
}

INSTANTIATE_TEST_SUITE_P(All, RopeFastPath, ::testing::Values("vulkan", "webgpu"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
