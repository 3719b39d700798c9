// The safety nets proven against kernels that are wrong on purpose (they exist only here):
// poison catches a kernel that skips its ragged tail, guard bands catch one that writes past the
// end, both also on scratch buffers (naming the scratch tensor, not the output it spoils), and a
// property over such a kernel fails, shrinks to the smallest ragged case, and prints a case id that
// reproduces the failure; so do the layout bugs (a skipped ragged texel, channels-packed read as
// width-packed, garbage in padding lanes).
// The derived tolerances are proven the same way: kernels that lose
// precision (4 mantissa bits of a RoPE result, float16 scores, a float16 softmax normaliser,
// float16 accumulation in the tiled AV) fail
// the default sweep on both backends, while the shipped kernels pass all of it.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>

#include "core/runner.h"
#include "gpu/vulkan/vulkan_backend.h"
#include "gpu/webgpu/webgpu_backend.h"
#include "reference/ops.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"
#include "tests/shrink_bug.h"
#include "tools/bench.h"
#include "tools/sweep.h"

namespace ts {
namespace {

const char* kRopeHalf = "gpu/vulkan/shaders/rope_half.comp";
// Only whole 4-wide texels of each row are handled: a texel holding the D%4==2 tail is never stored.
const std::string kSkipsRaggedTail = test::with_bug(kRopeHalf, "float r = d < hd", "    if (d >= (pc.D / 4) * 4) return;", false);
// The last invocation also writes one element past the end of the output (around the accessor, into
// the buffer it declares: gpu/vulkan/accessors.h).
const std::string kWritesPastEnd =
    test::with_bug(kRopeHalf, "out_store(t, v);", "  if (t == pc.n - 1u) ts_buf_out[t + 1u][0] = DTYPE(0.0);", true);

const char* kSdpaQk = "gpu/vulkan/shaders/sdpa_qk_tiled.comp";
// The last score column (key ctx-1) of every row is never stored: the softmax then reads poison.
const std::string kSkipsLastScoreColumn =
    test::with_bug(kSdpaQk, "if (c < pc.ctx) scores[row + c] =", "  if (c == pc.ctx - 1u) return;", false);
// The last invocation also writes one score past the end of the scores.
const std::string kScoresPastEnd =
    test::with_bug(kSdpaQk, "scores[row + c] =", "  if (row == 0u && c == 0u) scores[pc.Hq * pc.S * pc.ctx] = 0.0;", true);

std::unique_ptr<VulkanBackend> broken_backend(const std::string& source, const std::string& kernel = "rope_half") {
  std::string why;
  auto b = VulkanBackend::create({}, &why);
  if (b) b->set_kernel_source(kernel, source);
  return b;
}

TEST(BrokenKernels, PoisonCatchesASkippedRaggedTail) {
  auto b = broken_backend(kSkipsRaggedTail);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  // Width-packed: each row's texels are its own, the last one holding the tail and 2 padding lanes.
  CaseResult ok = judge(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=8/float32/texture3d_w/seed=1")), *b);
  EXPECT_EQ(ok.outcome, Outcome::pass) << ok.detail;  // no tail when D % 4 == 0
  CaseResult r = judge(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=6/float32/texture3d_w/seed=1")), *b);
  ASSERT_EQ(r.outcome, Outcome::fail);
  ASSERT_EQ(r.reports.size(), 1u);
  EXPECT_EQ(r.reports[0].unwritten, 2 * 3 * 2);  // 2 tail elements in each of the 6 rows
  EXPECT_NE(r.detail.find("never written"), std::string::npos) << r.detail;
}

TEST(BrokenKernels, GuardBandsCatchAWritePastTheEnd) {
  auto b = broken_backend(kWritesPastEnd);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  for (const char* id : {"rope_half/B=1,H=1,S=2,D=4/float32/buffer/seed=2", "rope_half/B=1,H=1,S=3,D=6/float16/buffer/seed=2"}) {
    CaseResult r = judge(prepare(Case::parse(id)), *b);
    ASSERT_EQ(r.outcome, Outcome::fail) << id;
    EXPECT_GT(r.guards.at("out").bad_bytes, 0) << id;
    EXPECT_GE(r.guards.at("out").first_offset, 0) << id;
    EXPECT_NE(r.detail.find("past the end"), std::string::npos) << r.detail;
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_TRUE(r.reports[0].ok()) << "every in-bounds value is right: only the guard shows the bug";
  }
}

// Stores far past the end: a whole row (D = 128 float32: 512 bytes, past a fixed 256-byte guard)
// and a whole tensor past the last texel. The trailing guard is as long as the tensor, so both land
// in it.
TEST(BrokenKernels, GuardBandsCatchAStoreARowOrATensorPastTheEnd) {
  for (const char* far : {"(pc.D / 4u)", "pc.n"}) {
    auto b = broken_backend(test::with_bug(kRopeHalf, "out_store(t, v);",
                                           cat("  if (t == pc.n - 1u) ts_buf_out[t + ", far, "][0] = DTYPE(0.0);"), true));
    ASSERT_TRUE(b) << "Vulkan unavailable";
    for (const char* id : {"rope_half/B=1,H=1,S=3,D=128/float32/buffer/seed=2", "rope_half/B=1,H=2,S=1,D=128/float16/buffer/seed=2"}) {
      CaseResult r = judge(prepare(Case::parse(id)), *b);
      ASSERT_EQ(r.outcome, Outcome::fail) << far << " " << id << ": " << r.detail;
      EXPECT_GT(r.guards.at("out").bad_bytes, 0) << far << " " << id;
      EXPECT_GE(r.guards.at("out").first_offset, 256) << far << " " << id;
      EXPECT_NE(r.detail.find("past the end"), std::string::npos) << r.detail;
    }
  }
}

// The default sweep the broken-kernel proofs run: `check`'s, less the operator's large case (which
// BackendOps.LargeCasesPass... runs on its own: the bugs here are not in indexing past 2^24, and the
// large case would triple the tests' time). `judged` sees each case and its result, in sweep order.
constexpr int64_t kSweepCases = kDefaultCases;
constexpr uint64_t kSweepSeed = 1;
void each_judged(Backend& b, const OpDef& op, DType t, const std::function<void(const Case&, const CaseResult&)>& judged) {
  const Sweep sweep(op, t, kSweepCases, kSweepSeed);
  const std::string large = op.large_case().id();
  for (int64_t k = 0; k < sweep.size(); ++k) {
    const Case c = sweep.at(k);
    if (c.id() != large) judged(c, judge(prepare(c), b));
  }
}

// Requantization that converts to an integer before it clamps: right while the value fits int32,
// wrong once a tiny output scale pushes it past (GLSL leaves that conversion undefined; x86 gives
// INT_MIN). The default sweep draws such scales. (WGSL defines f32 -> i32 to saturate: there the same
// line is harmless, so this is a Vulkan test.)
TEST(BrokenKernels, TheDefaultSweepPushesRequantizationPastInt32) {
  const std::string bug = "  return clamp(int(roundEven(q)) + pc.out_zp, -128, 127);";
  const char* anchor = "return int(clamp(roundEven(q) + float(pc.out_zp)";
  auto b = broken_backend(test::with_bug("gpu/vulkan/shaders/q8ta_linear_tiled.comp", anchor, bug, false), "q8ta_linear_tiled");
  ASSERT_TRUE(b) << "Vulkan unavailable";
  b->set_kernel_source("q8ta_linear_gemv", test::with_bug("gpu/vulkan/shaders/q8ta_linear_gemv.comp", anchor, bug, false));
  int fail = 0;
  std::string first;
  each_judged(*b, *find_op("q8ta_linear"), DType::i8, [&](const Case&, const CaseResult& r) {
    if (r.outcome == Outcome::fail && !fail++) first = r.id;
    EXPECT_NE(r.outcome, Outcome::error) << r.id << ": " << r.detail;
  });
  std::printf("[ extremes ] conversion before the clamp: %d failing cases, first %s\n", fail, first.c_str());
  EXPECT_GT(fail, 0) << "no case of the default sweep took the requantized value past int32";
}

// bench times a case only after it passed: the kernel that skips its ragged tail is FAIL and never
// timed, while the same kernel on a case without a tail passes and is timed.
TEST(BrokenKernels, BenchNeverTimesAFailingKernel) {
  auto b = broken_backend(kSkipsRaggedTail);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  TimingBudget budget;
  budget.warmup = 0;
  budget.min_reps = budget.max_reps = 2;
  JudgedTiming bad = judge_then_time(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=6/float32/buffer/seed=1")), *b, budget);
  EXPECT_EQ(bad.outcome, Outcome::fail) << bad.detail;
  EXPECT_FALSE(bad.timed);
  EXPECT_TRUE(bad.timing.seconds.empty());
  JudgedTiming ok = judge_then_time(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=8/float32/buffer/seed=1")), *b, budget);
  EXPECT_EQ(ok.outcome, Outcome::pass) << ok.detail;
  EXPECT_TRUE(ok.timed) << ok.detail;
  EXPECT_EQ(ok.timing.seconds.size(), 2u);
}

// sdpa's scores are scratch: never compared with a reference, yet poisoned and checked right after
// the QK kernel (the first to bind them). An unwritten column is reported on `scores`, with its
// count and place, before whatever the output shows.
TEST(BrokenKernels, ScratchPoisonNamesTheUnwrittenScores) {
  auto b = broken_backend(kSkipsLastScoreColumn, "sdpa_qk_tiled");
  ASSERT_TRUE(b) << "Vulkan unavailable";
  // Hq=2, S=3, ctx = pos + S = 8: scores [2,3,8], one unwritten element in each of the 6 rows.
  for (const char* dtype : {"float32", "float16"}) {
    const std::string id = cat("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5/", dtype, "/buffer/seed=1");
    CaseResult r = judge(prepare(Case::parse(id)), *b);
    if (r.outcome == Outcome::unsupported) continue;  // a device without float16
    ASSERT_EQ(r.outcome, Outcome::fail) << id;
    EXPECT_EQ(r.detail.rfind("scores: 6 of 48 elements never written by sdpa_qk_tiled", 0), 0u)
        << "the scratch tensor first, with the kernel that should have written it: " << r.detail;
    EXPECT_NE(r.detail.find("first at [0,0,7]"), std::string::npos) << r.detail;
    EXPECT_EQ(r.guards.at("scores").bad_bytes, 0) << r.detail;
    EXPECT_EQ(r.detail.find("(6 never written)"), std::string::npos) << "out is not blamed: " << r.detail;
    std::cout << "[ verdict  ] " << outcome_name(r.outcome) << " " << id << ": " << r.detail << "\n";
  }
  // The naive kernel is not broken: the same case passes through it.
  CaseResult naive = judge(prepare(Case::parse("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5,impl=naive/float32/buffer/seed=1")), *b);
  EXPECT_EQ(naive.outcome, Outcome::pass) << naive.detail;
}

TEST(BrokenKernels, ScratchGuardBandsCatchAWritePastTheScores) {
  auto b = broken_backend(kScoresPastEnd, "sdpa_qk_tiled");
  ASSERT_TRUE(b) << "Vulkan unavailable";
  CaseResult r = judge(prepare(Case::parse("sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5/float32/buffer/seed=1")), *b);
  ASSERT_EQ(r.outcome, Outcome::fail) << r.detail;
  EXPECT_EQ(r.guards.at("scores").bad_bytes, 4) << r.detail;  // one float32
  EXPECT_EQ(r.guards.at("scores").first_offset, 2 * 3 * 8 * 4) << r.detail;
  EXPECT_NE(r.detail.find("scores: 4 guard bytes overwritten"), std::string::npos) << r.detail;
  for (const CompareReport& rep : r.reports) EXPECT_TRUE(rep.ok()) << "outputs are right: only the guard shows it";
}

// The whole loop of issue 4: property fails -> RapidCheck shrinks -> the printed id reproduces.
TEST(BrokenKernels, PropertyShrinksToTheSmallestRaggedCaseAndItsIdReproduces) {
  auto b = broken_backend(kSkipsRaggedTail);
  ASSERT_TRUE(b) << "Vulkan unavailable";
  const std::string last_failing = test::shrunk_failure(*b, gen_rope_half(named_op("rope_half"), DType::f32, true));
  ASSERT_FALSE(last_failing.empty()) << "the broken kernel was not caught";
  Case shrunk = Case::parse(last_failing);
  EXPECT_EQ(shrunk.get("D"), 2) << last_failing;  // the smallest D with D % 4 == 2
  EXPECT_EQ(shrunk.get("B"), 1) << last_failing;
  EXPECT_EQ(shrunk.get("H"), 1) << last_failing;
  EXPECT_EQ(shrunk.get("S"), 1) << last_failing;
  EXPECT_EQ(shrunk.seed, 0u) << last_failing;
  test::expect_reproduces(last_failing, *b);
}

// ---- Layout bugs (issue 10): each caught by a property, shrunk, and reproduced from its id ----

struct LayoutBug {
  std::string name, anchor, line;
  bool after;
  std::string storage;  // every drawn case runs in this storage
};

const std::vector<LayoutBug>& layout_bugs() {
  static const std::vector<LayoutBug> bugs = {
      // Ragged last texel of a width-packed row never stored.
      {"skips_ragged_texel", "float r = d < hd", "    if (d >= (pc.D / 4) * 4) return;", false, "texture3d_w"},
      // x read as if width-packed whatever its packing: right for texture3d_w, wrong for texture3d_c.
      {"channels_read_as_width", "void main()",
       "float x_at_w(uint i) { uvec4 p = ts_image_locate(TS_TEXTURE3D_W, x_dims(), i); return ts_texel_x(p.xyz)[p.w]; }\n"
       "#define x_at x_at_w",
       false, "texture3d_c"},
      // Garbage stored in the padding lanes of the last texel (around the accessor, which zeroes them).
      {"garbage_in_padding", "out_store(t, v);", test::kGarbageInPaddingOfOut, true, "buffer;out=texture3d_w"},
  };
  return bugs;
}

void PrintTo(const LayoutBug& b, std::ostream* os) { *os << b.name << " in " << b.storage; }

class LayoutBugs : public ::testing::TestWithParam<LayoutBug> {};

// Every bug is caught; the shrunk case is the smallest one that shows it (1 row; the smallest head
// dim with a ragged texel, or the one texel of channels a width read misses), still in the bug's
// storage, and its printed id reproduces. The shipped kernel passes the same storage.
TEST_P(LayoutBugs, ShrinksToASmallCaseWhoseIdReproduces) {
  const LayoutBug& bug = GetParam();
  auto b = broken_backend(test::with_bug(kRopeHalf, bug.anchor, bug.line, bug.after));
  ASSERT_TRUE(b) << "Vulkan unavailable";
  const std::string id = test::shrunk_failure(*b, gen_rope_half(named_op("rope_half"), DType::f32, true), bug.storage);
  ASSERT_FALSE(id.empty()) << bug.name << " was not caught";
  Case shrunk = Case::parse(id);
  EXPECT_EQ(shrunk.storage, bug.storage) << id;
  EXPECT_EQ(shrunk.get("B") * shrunk.get("S"), 1) << id;
  EXPECT_LE(shrunk.get("D"), 2) << id;
  test::expect_reproduces(id, *b);
  CaseResult ok = judge(prepare(shrunk), *broken_backend(std::string(embedded(kRopeHalf))));
  EXPECT_EQ(ok.outcome, Outcome::pass) << ok.detail;
}

INSTANTIATE_TEST_SUITE_P(All, LayoutBugs, ::testing::ValuesIn(layout_bugs()),
                         [](const auto& info) { return info.param.name; });

// ---- Precision bugs against the default sweep ----

struct Splice {
  std::string anchor, line;
  bool after = true;
};

struct PrecisionBug {
  std::string name;
  std::string op, kernel;  // the sweep of `op` runs with `kernel` replaced
  std::vector<DType> dtypes;  // the sweep of each must catch it
  std::vector<Splice> glsl, wgsl;  // wgsl empty: a Vulkan-only kernel
  // A capability the kernel needs (its cases are UNSUPPORTED elsewhere): a backend without it cannot
  // run the bug, and says so instead of failing; the GPU machine's run (ci/gpu) asserts it.
  std::string needs;
};

// Drops the low 4 of float32's 23 stored mantissa bits of a value (truncation toward zero).
const char* kLose4Glsl = "  v = uintBitsToFloat(floatBitsToUint(v) & 0xFFFFFFF0u);";
std::string lose4_wgsl(const std::string& a) {
  return cat(a, " = bitcast<vec4<f32>>(bitcast<vec4<u32>>(", a, ") & vec4<u32>(0xFFFFFFF0u));");
}
// Rounds a float32 value to float16's 11 significant bits, ties to even, in integer arithmetic:
// lavapipe folds a float round trip such as unpackHalf2x16(packHalf2x16(x)) back to x (the specs
// allow it), which would leave the kernel correct. The values rounded here stay in float16's range.
std::string f16_glsl(const std::string& v) {
  return cat("uintBitsToFloat((floatBitsToUint(", v, ") + 0xFFFu + ((floatBitsToUint(", v, ") >> 13) & 1u)) & 0xFFFFE000u)");
}
std::string f16_wgsl(const std::string& v) {
  return cat("bitcast<f32>((bitcast<u32>(", v, ") + 0xFFFu + ((bitcast<u32>(", v, ") >> 13u) & 1u)) & 0xFFFFE000u)");
}

std::string f16_wgsl4(const std::string& v) {
  return cat("bitcast<vec4<f32>>((bitcast<vec4<u32>>(", v, ") + vec4<u32>(0xFFFu) + ((bitcast<vec4<u32>>(", v,
             ") >> vec4<u32>(13u)) & vec4<u32>(1u))) & vec4<u32>(0xFFFFE000u))");
}

// Every accumulator of the tiled AV rounded to float16 after each key.
std::string av_f16(std::string (*round)(const std::string&)) {
  std::string line;
  for (int i = 0; i < 8; ++i) line += cat(i ? " " : "      ", "acc", i, " = ", round(cat("acc", i)), ";");
  return line;
}

const std::vector<PrecisionBug>& precision_bugs() {
  static const std::vector<PrecisionBug> bugs = {
      // GLSL: the output texel loses the bits just before its store.
      {"rope_half_loses_4_bits", "rope_half", "rope_half", {DType::f32},
       {{"out_store(t, v);", kLose4Glsl, false}},
       {{"out_store(t, v);", "  " + lose4_wgsl("v"), false}}},
      // rope_llama: first in its store helper, which every path calls (the buffer fast path too).
      {"rope_llama_loses_4_bits", "rope_llama", "rope_llama", {DType::f32},
       {{"void out_store(bool is_q, uint t, vec4 v", kLose4Glsl, true}},
       {{"var v = value;", "  " + lose4_wgsl("v"), true}}},
      // Every score the softmax reads is float16-precise, as if QK computed or stored it in float16
      // (naive and tiled alike): each invocation rounds the scores it reads, before it reads them.
      {"sdpa_scores_in_float16", "sdpa", "sdpa_softmax", {DType::f32, DType::f16},
       {{"float m = MASKED;", "  for (uint c = t; c < seen; c += T) scores[b + c] = " + f16_glsl("scores[b + c]") + ";", false}},
       {{"var m = MASKED;", "  for (var c = t; c < seen; c += T) { scores[b + c] = " + f16_wgsl("scores[b + c]") + "; }", false}}},
      // The normaliser accumulates in float16 precision: each invocation's part, and the tree's sums.
      {"sdpa_normaliser_in_float16", "sdpa", "sdpa_softmax", {DType::f32, DType::f16},
       {{"sum += e;", "  sum = " + f16_glsl("sum") + ";"}, {"red[l] += red[l + k];", "    if (t < k) red[l] = " + f16_glsl("red[l]") + ";"}},
       {{"*sum += e;", "  *sum = " + f16_wgsl("*sum") + ";"},
        {"red[l] += red[l + k];", "    if (t < k) { red[l] = " + f16_wgsl("red[l]") + "; }"}}},
      // The tiled AV accumulates in float16 precision (every partial sum rounded to float16).
      {"sdpa_av_accumulates_in_float16", "sdpa", "sdpa_av_tiled", {DType::f32, DType::f16},
       {{"acc7 += a1.w * b;", av_f16(f16_glsl)}},
       {{"acc7 += a1.w * b;", av_f16(f16_wgsl4)}}},
      // rms_norm's tree adds the rows' squares in float16 precision.
      {"rms_norm_sums_in_float16", "rms_norm", "rms_norm", {DType::f32},
       {{"@marker tree_sum", "    if (l < k) red[l] = " + f16_glsl("red[l]") + ";"}},
       {{"@marker tree_sum", "    if (l < k) { red[l] = " + f16_wgsl("red[l]") + "; }"}}},
      // rms_norm forgets eps: only rows of small values (a mean of squares near eps) show it.
      {"rms_norm_drops_eps", "rms_norm", "rms_norm", {DType::f32, DType::f16, DType::bf16},
       {{"@marker rstd", "  rs = inversesqrt(red[0] * pc.inv_h);"}},
       {{"@marker rstd", "  rs = inverseSqrt(red[0] * pc.inv_h);"}}},
      // The tensor-core GEMM stages the first K stage with a weight word lost (16 rows of a tile).
      {"q8ta_coopmat_drops_a_weight_word", "q8ta_linear", "q8ta_linear_coopmat", {DType::i8},
       {{"@marker stage_w", "  if (st == 0u && p == 0u) sbuf[at + BT * RW + fr * RW + fc].x = 0u;"}},
       {{"@marker stage_w", "        if (st == 0u && c == 0u && j == 0u) { sbuf[XW + at] = 0; }"}}, "cooperative-matrix"},
      // The flash kernel weighs float16-rounded scores (large logits show it).
      {"sdpa_coopmat_scores_in_float16", "sdpa", "sdpa_flash_coopmat", {DType::f16},
       {{"@marker weight", "        e = exp2(ts_f16_round(pc.scale_log2 * sc[i]) - sub[i]);"}},
       {{"@marker weight", "      e = exp2(" + f16_wgsl("pc.scale_log2 * fsm[sat + k]") + " - select(KILL, R, c + k < n));"}},
       "cooperative-matrix"},
  };
  return bugs;
}

std::string bugged_source(const PrecisionBug& bug, const std::string& backend) {
  const bool vk = backend == "vulkan";
  const std::string path = vk ? cat("gpu/vulkan/shaders/", bug.kernel, ".comp") : cat("gpu/webgpu/shaders/", bug.kernel, ".wgsl");
  std::string src = test::shipped(path);  // an anchor may lie in an include (sdpa_tile_acc)
  for (const Splice& s : vk ? bug.glsl : bug.wgsl) src = test::splice(src, s.anchor, s.line, s.after, path);
  return src;
}

// A fresh backend of the named kind with `kernel`'s source replaced (none: the shipped kernels).
std::unique_ptr<Backend> open_with(const std::string& backend, const std::string& kernel, const std::string& source,
                                   std::string* why) {
  if (backend == "vulkan") {
    auto b = VulkanBackend::create({}, why);
    if (b && !kernel.empty()) b->set_kernel_source(kernel, source);
    return b;
  }
  auto b = WebGpuBackend::create({}, why);
  if (b && !kernel.empty()) b->set_kernel_source(kernel, source);
  return b;
}

struct SweepTally {
  int pass = 0, fail = 0, other = 0;  // other: anything but PASS / FAIL / REJECTED / UNSUPPORTED
  double worst = 0;                   // over the cases that ran
  std::string first_fail, first_other;
};

SweepTally run_sweep(Backend& b, const OpDef& op, DType t) {
  SweepTally s;
  each_judged(b, op, t, [&](const Case&, const CaseResult& r) {
    s.worst = std::max(s.worst, r.worst);
    std::string line = cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail);
    if (r.outcome == Outcome::pass) ++s.pass;
    else if (r.outcome == Outcome::fail) ++s.fail, s.first_fail = s.first_fail.empty() ? line : s.first_fail;
    else if (r.outcome != Outcome::rejected && r.outcome != Outcome::unsupported)
      ++s.other, s.first_other = s.first_other.empty() ? line : s.first_other;
  });
  return s;
}

// The failures of the default sweep (less its large case) of `op` x `t` on `b`: how many, the first
// (id and detail), and how many of them fall where `shows` says the bug cannot show.
struct SweepFailures {
  int fail = 0, misplaced = 0;
  std::string first;
};

SweepFailures sweep_failures(Backend& b, const OpDef& op, DType t, const std::function<bool(const Case&)>& shows) {
  SweepFailures f;
  each_judged(b, op, t, [&](const Case& c, const CaseResult& r) {
    if (r.outcome != Outcome::fail) return;
    if (!f.fail++) f.first = cat(r.id, ": ", r.detail);
    f.misplaced += !shows(c);
  });
  return f;
}

// A shipped kernel's resolved text (includes spliced in) for `backend`.
std::string shipped_text(const std::string& backend, const std::string& kernel) {
  const bool vk = backend == "vulkan";
  return test::shipped(cat(vk ? "gpu/vulkan/shaders/" : "gpu/webgpu/shaders/", kernel, vk ? ".comp" : ".wgsl"));
}

class PrecisionBugs : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Backend> open(const std::string& kernel = "", const std::string& source = "") {
    std::string why;
    auto b = open_with(GetParam(), kernel, source, &why);
    if (!b && !test::missing_allowed(GetParam()))
      ADD_FAILURE() << GetParam() << " backend UNAVAILABLE on this machine: " << why
                    << " (set TOUCHSTONE_ALLOW_MISSING=" << GetParam() << " to skip deliberately)";
    return b;
  }
};

// Each precision bug fails at least one case of the default sweep, and fails only by values out of
// tolerance (never an error or a mismatched rejection: the bug is the precision, nothing else).
TEST_P(PrecisionBugs, EachIsCaughtByTheDefaultSweep) {
  TS_RELEASE_PASS_ONLY("a whole default sweep per bug");
  for (const PrecisionBug& bug : precision_bugs()) {
    if (bug.wgsl.empty() && GetParam() != "vulkan") continue;
    auto b = open(bug.kernel, bugged_source(bug, GetParam()));
    if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
    const auto caps = b->info().capabilities;
    if (!bug.needs.empty() && std::find(caps.begin(), caps.end(), bug.needs) == caps.end()) {
      std::printf("[ precision] %-30s not run on %s: it needs %s, which the device lacks\n", bug.name.c_str(),
                  GetParam().c_str(), bug.needs.c_str());
      continue;
    }
    for (DType t : bug.dtypes) {
      SweepTally s = run_sweep(*b, *find_op(bug.op), t);
      std::printf("[ precision] %-30s %-8s %-7s caught in %3d of %3d cases, worst/tol %.3g\n", bug.name.c_str(), dtype_name(t).data(),
                  GetParam().c_str(), s.fail, s.fail + s.pass, s.worst);
      EXPECT_GT(s.fail, 0) << bug.name << " " << dtype_name(t) << " on " << GetParam() << " passes the default sweep";
      EXPECT_EQ(s.other, 0) << bug.name << ": " << s.first_other;
    }
  }
}

// A bug in the scalar int8 path (an extra term in the GEMV's scalar dot product): a device with the
// packed dot product takes the scalar path only in the cases that run the fallbacks (odd seeds,
// Problem::fallback_paths), and the default sweep catches the bug there, and only there.
TEST_P(PrecisionBugs, TheDefaultSweepRunsTheScalarInt8PathToo) {
  const bool vk = GetParam() == "vulkan";
  const std::string path = vk ? "gpu/vulkan/shaders/q8ta_linear_gemv.comp" : "gpu/webgpu/shaders/q8ta_linear_gemv.wgsl";
  const std::string anchor = vk ? "ts_idot(a, weight_at4(wo.w + k)));" : "dot(a, weight_at4(wo.w + k)));";
  auto b = open("q8ta_linear_gemv", test::with_bug(path, anchor, vk ? "      s.w += a.w;" : "        s.w += a.w;", true));
  if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
  const auto caps = b->info().capabilities;
  const bool has_dot = std::find(caps.begin(), caps.end(), "int8-dot-product") != caps.end();
  // On a device with the dot product only the fallbacks' cases (odd seeds) take the scalar path.
  const SweepFailures f = sweep_failures(*b, *find_op("q8ta_linear"), DType::i8, [&](const Case& c) { return !has_dot || c.seed % 2 == 1; });
  const int fail = f.fail, fail_on_dot = f.misplaced;
  std::printf("[ paths    ] scalar int8 bug on %s (%s): %d failing cases\n", GetParam().c_str(),
              has_dot ? "int8-dot-product" : "scalar only", fail);
  EXPECT_GT(fail, 0) << "the default sweep never ran the scalar int8 path on " << GetParam();
  EXPECT_EQ(fail_on_dot, 0) << "a case on the dot-product path failed: the bug is in the scalar path only";
}

// Ids that ignore a folded grid's rows: an elementwise kernel whose invocation id is its x alone, and
// the GEMV whose workgroup id is its x alone. Only the large cases fold at the device's limit, so the
// default sweep catches these through the cases that fold on purpose (Problem::fold_grids), and
// only there.
TEST_P(PrecisionBugs, TheDefaultSweepFoldsTheGrids) {
  const bool vk = GetParam() == "vulkan";
  struct FoldBug {
    const char* kernel;
    const char* op;
    DType dtype;
    std::string source;
  };
  auto text = [&](const char* kernel) { return shipped_text(GetParam(), kernel); };
  const FoldBug bugs[] = {
      {"rope_half", "rope_half", DType::f32,
       test::replace_once(text("rope_half"), vk ? "ts_linear_id()" : "ts_linear_id(gid, nwg)", vk ? "gl_GlobalInvocationID.x" : "gid.x")},
      {"q8ta_linear_gemv", "q8ta_linear", DType::i8,
       test::replace_once(text("q8ta_linear_gemv"), vk ? "gl_WorkGroupID.x + gl_NumWorkGroups.x *" : "wid.x + nwg.x *",
                          vk ? "gl_WorkGroupID.x + 0u *" : "wid.x + 0u *")}};
  for (const FoldBug& bug : bugs) {
    auto b = open(bug.kernel, bug.source);
    if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
    const OpDef& op = *find_op(bug.op);
    const SweepFailures f = sweep_failures(*b, op, bug.dtype, [&](const Case& c) { return make_problem(op, c).fold_grids; });
    std::printf("[ folds    ] %-16s id without the fold on %s: %d failing cases, first %s\n", bug.kernel, GetParam().c_str(),
                f.fail, f.first.c_str());
    EXPECT_GT(f.fail, 0) << bug.kernel << ": no case of the default sweep folded its grid on " << GetParam();
    EXPECT_EQ(f.misplaced, 0) << bug.kernel << ": a case that does not fold failed: the bug is in the fold only";
  }
}

// Partials whose queries all see the block's furthest key (pos + S): the causal mask lost. Only a
// split case with S > 1 can show it, in either partial; the default sweep draws those on purpose.
TEST_P(PrecisionBugs, TheDefaultSweepMasksKeysInBothSplitPartials) {
  const bool vk = GetParam() == "vulkan";
  for (const std::string kernel : {"sdpa_split_partial", "sdpa_decode_partial"}) {
    const std::string seen = !vk && kernel == "sdpa_split_partial" ? "(k.q0 + min(i, k.nq - 1u)) / k.G + 1u" : "(q0 + min(i, nq - 1u)) / G + 1u";
    auto b = open(kernel, test::replace_once(shipped_text(GetParam(), kernel), seen, "pc.S"));
    if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
    const SweepFailures f = sweep_failures(*b, *find_op("sdpa"), DType::f32, [](const Case& c) { return c.get("S") > 1; });
    std::printf("[ mask     ] %-19s without the causal mask on %s: %d failing cases, first %s\n", kernel.c_str(), GetParam().c_str(),
                f.fail, f.first.c_str());
    EXPECT_GT(f.fail, 0) << kernel << ": no split case of the default sweep had keys the causal mask hides";
    EXPECT_EQ(f.misplaced, 0) << kernel << ": an S = 1 case failed, where the mask hides nothing";
  }
}

// The tiled GEMV-less q8ta_linear stores its whole 4x4 tile, with no bound on rows or columns: the
// rows past M land past the end of out (its guard is at least a tile's reach), the columns past N
// in the next row or past the end. Only a case whose last tile is ragged can show it.
TEST_P(PrecisionBugs, TheDefaultSweepCatchesAWholeRaggedTileStored) {
  std::string source = shipped_text(GetParam(), "q8ta_linear_tiled");
  source = test::replace_once(test::replace_once(source, "r0 + r < pc.M", "true"), "c0 + c < pc.N", "true");
  auto b = open("q8ta_linear_tiled", source);
  if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
  const SweepFailures f = sweep_failures(*b, *find_op("q8ta_linear"), DType::i8,
                                         [](const Case& c) { return c.get("M") % 4 != 0 || c.get("N") % 4 != 0; });
  std::printf("[ tiles    ] whole last tile stored on %s: %d failing cases, first %s\n", GetParam().c_str(), f.fail, f.first.c_str());
  EXPECT_GT(f.fail, 0) << "no case of the default sweep stored past a ragged last tile on " << GetParam();
  EXPECT_EQ(f.misplaced, 0) << "a case without a ragged tile failed: the bug is in the ragged tile only";
}

// The int8 kernels' buffer fast paths (gpu/ACCESSORS.md), each broken on its own: q8ta_add's never
// stores the last word of a whole 16-byte chunk, the GEMV's never adds the last 16-byte chunk of a
// weight row. The default sweep runs each where it can show, q8ta_add with a, b and out all buffers
// and 16 elements or more, the GEMV with K % 16 == 0 (weight is always a buffer; both int8 paths),
// and catches each there alone: the sweep reaches the fast paths.
TEST_P(PrecisionBugs, TheDefaultSweepReachesTheInt8FastPaths) {
  const bool vk = GetParam() == "vulkan";
  struct FastBug {
    const char* kernel;
    const char* op;
    std::string source;
    std::function<bool(const Case&)> shows;
  };
  const OpDef& add = *find_op("q8ta_add");
  const FastBug bugs[] = {
      {"q8ta_add", "q8ta_add",
       test::splice(shipped_text(GetParam(), "q8ta_add"), vk ? "out_store_chunk(t, uvec4(" : "out_store_chunk(t, vec4<u32>(",
                    "      if (t < 0xFFFFFFFFu) { out_store_word(4u * t, add_word(x.x, y.x)); out_store_word(4u * t + 1u, "
                    "add_word(x.y, y.y)); out_store_word(4u * t + 2u, add_word(x.z, y.z)); return; }  // BUG: no last word",
                    false),
       [&](const Case& c) {
         const Problem p = make_problem(add, c);
         return p.layout("a") == Layout::buffer && p.layout("b") == Layout::buffer && p.layout("out") == Layout::buffer &&
                p.inputs.at("a").numel() >= 16;
       }},
      {"q8ta_linear_gemv", "q8ta_linear",
       test::splice(shipped_text(GetParam(), "q8ta_linear_gemv"),
                    "// @marker chunks_loaded",
                    vk ? "    for (uint j = 0u; j < STEPS; ++j) if (c + j * WG == KC - 1u) xa[j] = uvec4(0u);  // BUG: a row's last chunk never added"
                       : "    for (var j = 0u; j < STEPS; j++) { if (c + j * WG == KC - 1u) { xa[j] = vec4<u32>(0u); } }  // BUG: a row's last chunk never added",
                    true),
       [](const Case& c) { return c.get("M") == 1 && c.word("impl", "auto") != "tiled" && c.get("K") % 16 == 0; }}};
  for (const FastBug& bug : bugs) {
    auto b = open(bug.kernel, bug.source);
    if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
    const SweepFailures f = sweep_failures(*b, *find_op(bug.op), DType::i8, bug.shows);
    std::printf("[ fast path] %-16s broken on %s: %d failing cases, first %s\n", bug.kernel, GetParam().c_str(), f.fail,
                f.first.c_str());
    EXPECT_GT(f.fail, 0) << bug.kernel << ": the default sweep never ran its fast path on " << GetParam();
    EXPECT_EQ(f.misplaced, 0) << bug.kernel << ": a case off the fast path failed: the bug is in the fast path only";
  }
}

// The split combine's max leaves out the chunks past the CB * SL it holds at once. The combine's
// result is the same whatever max it rescales by, until a chunk's exp(m_j - M) overflows: only a
// context longer than 128 chunks with logits large enough shows it, and the default sweep draws
// those. Its float32 cases first, then its other dtypes': the sweep draws a few such contexts per
// dtype, and whether their explicit scales leave the logits large enough is the draw's luck.
TEST_P(PrecisionBugs, TheDefaultSweepGivesTheCombineMoreChunksThanItHoldsWithLargeLogits) {
  const bool vk = GetParam() == "vulkan";
  const std::string path = vk ? "gpu/vulkan/shaders/sdpa_split_combine.comp" : "gpu/webgpu/shaders/sdpa_split_combine.wgsl";
  const std::string anchor = vk ? "for (uint j = k + CB * SL; j < nv; j += SL) M = max" : "for (var j = k + CB * SL; j < nv; j += SL) { M = max";
  std::string source = test::splice(test::with_bug(path, anchor, "  if (false) {", false), anchor, "  }", true, path);
  auto b = open("sdpa_split_combine", source);
  if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
  int fail = 0;
  for (DType t : find_op("sdpa")->dtypes) {
    SweepTally s = run_sweep(*b, *find_op("sdpa"), t);
    std::printf("[ long ctx ] combine without the late chunks' max on %s, %s: %d failing cases\n", GetParam().c_str(),
                dtype_name(t).data(), s.fail);
    if ((fail += s.fail) > 0) break;
  }
  EXPECT_GT(fail, 0) << "no split case of the default sweep had more than 128 chunks and large logits";
}

// The same sweep over every operator and dtype passes the shipped kernels: the bounds that catch the
// bugs above hold for correct float32 arithmetic. The worst error/tolerance ratio is printed per
// op x dtype; a correct kernel that needs more than its bound means the derivation is wrong.
TEST_P(PrecisionBugs, ShippedKernelsPassTheWholeDefaultSweep) {
  TS_RELEASE_PASS_ONLY("the whole default sweep of every operator");
  auto b = open();
  if (!b) GTEST_SKIP() << GetParam() << " UNAVAILABLE";
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      SweepTally s = run_sweep(*b, *op, t);
      std::printf("[ worst/tol] %-12s %-8s %-7s %.3g over %d passing cases\n", op->name.c_str(), dtype_name(t).data(),
                  GetParam().c_str(), s.worst, s.pass);
      EXPECT_EQ(s.fail, 0) << op->name << " " << dtype_name(t) << ": " << s.first_fail;
      EXPECT_EQ(s.other, 0) << op->name << " " << dtype_name(t) << ": " << s.first_other;
    }
}

INSTANTIATE_TEST_SUITE_P(All, PrecisionBugs, ::testing::Values("vulkan", "webgpu"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
