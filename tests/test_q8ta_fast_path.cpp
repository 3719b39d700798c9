// The int8 kernels' buffer fast paths (gpu/ACCESSORS.md "The buffer fast path") against their
// general paths, on each backend, with the packed dot product and without: q8ta_add with a, b and
// out all buffers gives the same output bits as the same logical case in int8_4w (the accessors'
// path); the GEMV with K % 16 == 0 (weight always a buffer) gives the same bits as the same kernel
// with its fast path switched off. And each fast path is what runs where it should, and only there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/runner.h"
#include "gpu/embedded.h"
#include "gpu/gpu_backend.h"
#include "gpu/kernel_source.h"
#include "tests/kernel_bugs.h"
#include "tests/q8ta_fixture.h"

namespace ts {
namespace {

using test::line;
using test::Q8ta;

// Whole 16-byte chunks only, chunks and a tail of whole words, a ragged last word, fewer than 16
// elements, and grids past one workgroup.
const std::vector<std::string>& add_shapes() {
  static const std::vector<std::string> s = {"16", "4096", "3:5:7", "2:1003", "1:17", "5", "64:33", "2:3:4:5"};
  return s;
}

std::string add_id(const std::string& shape, const char* storage, int seed) {
  return cat("q8ta_add/shape=", shape, ",a_zp=-7,b_zp=100,out_zp=3/int8/", storage, "/seed=", seed);
}

// K a multiple of 16: one chunk per row, fewer chunks than invocations, more; x a buffer (one load
// of 16 elements) or packed (x_packed4).
struct Gemv {
  int K, N;
  const char* storage;
};
const std::vector<Gemv>& gemv_shapes() {
  static const std::vector<Gemv> s = {{16, 5, "buffer"},
                                      {64, 9, "buffer;x=int8_4w"},
                                      {320, 4, "buffer;out=int8_4w4c;x=int8_4w4c"},
                                      {1024, 7, "buffer;out=int8_4w"},
                                      {2048, 3, "buffer"}};
  return s;
}

std::string gemv_id(const Gemv& g, int seed) {
  return cat("q8ta_linear/M=1,K=", g.K, ",N=", g.N, ",impl=gemv,x_zp=-9,out_shift=3/int8/", g.storage, "/seed=", seed);
}

class Q8taFastPath : public Q8ta {
 protected:
  bool vk() const { return GetParam() == "vulkan"; }
  std::string shipped(const std::string& kernel) const {
    const std::string dir = vk() ? "gpu/vulkan/shaders/" : "gpu/webgpu/shaders/", path = dir + kernel + (vk() ? ".comp" : ".wgsl");
    return resolve_includes(embedded(path), dir, path);
  }
  // A fresh backend (dot product on or off) running `source` as `kernel`.
  std::unique_ptr<Backend> with_kernel(const std::string& kernel, const std::string& source, bool int_dot) {
    std::unique_ptr<Backend> b = test::fresh_gpu_backend(GetParam(), int_dot);
    if (b) dynamic_cast<GpuBackend&>(*b).set_kernel_source(kernel, source);
    return b;
  }
};

TEST_P(Q8taFastPath, AddBitIdenticalToTheGeneralPath) {
  for (const std::string& shape : add_shapes())
    for (int seed : {20, 21}) {
      const CaseResult fast = judge(prepare(Case::parse(add_id(shape, "buffer", seed))), dot());
      const CaseResult general = judge(prepare(Case::parse(add_id(shape, "int8_4w", seed))), dot());
      ASSERT_EQ(fast.outcome, Outcome::pass) << line(fast);
      ASSERT_EQ(general.outcome, Outcome::pass) << line(general);
      EXPECT_EQ(fast.digests, general.digests) << fast.id << " differs from " << general.id;
    }
}

TEST_P(Q8taFastPath, GemvBitIdenticalToTheGeneralPath) {
  const std::string off = test::replace_once(shipped("q8ta_linear_gemv"), "weight_is_buffer && K % 16u == 0u", "false");
  for (bool int_dot : {true, false}) {
    auto general = with_kernel("q8ta_linear_gemv", off, int_dot);
    ASSERT_TRUE(general);
    Backend& fast = int_dot ? dot() : scalar();
    for (const Gemv& g : gemv_shapes()) {
      // An even seed: the dot product where the backend has it on (odd seeds run the fallbacks).
      const Expected e = prepare(Case::parse(gemv_id(g, 22)));
      const CaseResult a = judge(e, fast), b = judge(e, *general);
      ASSERT_EQ(a.outcome, Outcome::pass) << line(a);
      ASSERT_EQ(b.outcome, Outcome::pass) << line(b);
      EXPECT_EQ(a.digests, b.digests) << e.c.id() << (int_dot ? " (dot product)" : " (scalar)");
    }
  }
}

// A fast path that stores or sums nothing: its cases fail, the general path's pass. So the cases
// above compare the two paths, not one path twice.
TEST_P(Q8taFastPath, RunsForItsCasesOnly) {
  const std::string add = test::splice(shipped("q8ta_add"), vk() ? "out_store_chunk(t, uvec4(" : "out_store_chunk(t, vec4<u32>(",
                                       vk() ? "      if (t < 0xFFFFFFFFu) return;  // BUG: nothing stored"
                                            : "      if (t < 0xFFFFFFFFu) { return; }  // BUG: nothing stored",
                                       false);
  auto b = with_kernel("q8ta_add", add, true);
  ASSERT_TRUE(b);
  const CaseResult fast = judge(prepare(Case::parse(add_id("5:67", "buffer", 20))), *b);
  EXPECT_EQ(fast.outcome, Outcome::fail) << line(fast);
  ASSERT_FALSE(fast.reports.empty()) << line(fast);
  EXPECT_EQ(fast.reports[0].unwritten, 5 * 67 / 16 * 16) << line(fast);  // every whole chunk; the tail is stored
  const CaseResult general = judge(prepare(Case::parse(add_id("5:67", "int8_4w", 20))), *b);
  EXPECT_EQ(general.outcome, Outcome::pass) << line(general);

  const std::string gemv = test::splice(shipped("q8ta_linear_gemv"), "// @marker chunks_loaded",
                                        vk() ? "    if (c < 0xFFFFFFFFu) break;  // BUG: no sums" : "    if (c < 0xFFFFFFFFu) { break; }  // BUG: no sums",
                                        true);
  b = with_kernel("q8ta_linear_gemv", gemv, true);
  ASSERT_TRUE(b);
  EXPECT_EQ(judge(prepare(Case::parse(gemv_id({64, 9, "buffer"}, 22))), *b).outcome, Outcome::fail);
  EXPECT_EQ(judge(prepare(Case::parse(gemv_id({63, 9, "buffer"}, 22))), *b).outcome, Outcome::pass);
  EXPECT_EQ(judge(prepare(Case::parse(gemv_id({72, 9, "buffer"}, 22))), *b).outcome, Outcome::pass);
}

INSTANTIATE_TEST_SUITE_P(All, Q8taFastPath, ::testing::Values("vulkan", "webgpu"), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
