// The foreign backends (gpu/foreign): the contract comes first, a library that aborts ends one case
// and not the run, and an adapter can fail — a mapping broken on purpose is caught, shrunk, and
// its id reproduces.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstring>

#include "core/runner.h"
#include "goldens/verify.h"
#include "gpu/ggml/ggml_backend.h"
#include "gpu/ggml/mappings.h"
#include "gpu/ort/ort_backend.h"
#include "gpu/ort/mappings.h"
#include "gpu/plans/registry.h"

namespace ts::test {
namespace {

// The backend (its mapping of `op` replaced by `broken(mapping)`, if given); null when the library is
// not installed here (the test skips: the ctest cli_expected_backends_available fails for that).
std::unique_ptr<ForeignBackend> opened(ForeignOptions o, const std::string& op, Mapping (*broken)(Mapping)) {
  if (o.argv.empty()) return nullptr;
  for (Mapping& m : o.mappings)
    if (broken && m.op == op) m = broken(m);
  std::string why_not;
  return ForeignBackend::create(std::move(o), &why_not);
}

std::unique_ptr<ForeignBackend> ggml(const std::string& op = "", Mapping (*broken)(Mapping) = nullptr) {
  std::string why;
  return opened(ggml_vulkan_options({}, &why), op, broken);
}

std::unique_ptr<ForeignBackend> ort(const std::string& op = "", Mapping (*broken)(Mapping) = nullptr) {
  std::string why;
  return opened(ort_webgpu_options({}, &why), op, broken);
}

// Small float16 sdpa cases in buffers, one head_dim (each new one is a compile on lavapipe).
rc::Gen<Case> small_sdpa() {
  return rc::gen::apply(
      [](int S, int group, int Hkv, int pos, uint32_t seed) {
        Case c{"sdpa", {}, DType::f16, "buffer", uint64_t(seed) * 8};  // no path bits: paths are not the library's
        c.set("S", S).set("Hq", group * Hkv).set("Hkv", Hkv).set("D", 16).set("pos", pos);
        return c;
      },
      rc::gen::inRange(1, 4), rc::gen::inRange(1, 3), rc::gen::inRange(1, 4), rc::gen::inRange(0, 6),
      rc::gen::inRange<uint32_t>(0, 1000));
}

// The id of the smallest failing case RapidCheck shrinks to ("" if none failed).
std::string shrunk(Backend& b) {
  std::string last;
  auto property = [&] {
    const Case c = *small_sdpa();
    const CaseResult r = judge(prepare(c), b);
    if (r.outcome != Outcome::pass) last = c.id();
    RC_ASSERT(r.outcome == Outcome::pass);
  };
  rc::detail::TestParams params;
  params.seed = 7;
  params.maxSuccess = 60;
  rc::detail::FailureResult failure;
  return rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params).match(failure) ? last : "";
}

void expect_caught_and_shrunk(Backend& b, const char* var, int64_t smallest) {
  const std::string id = shrunk(b);
  ASSERT_FALSE(id.empty()) << "the broken mapping passed 60 cases";
  const Case c = Case::parse(id);
  EXPECT_EQ(c.get(var), smallest) << id;
  EXPECT_EQ(judge(prepare(c), b).outcome, Outcome::fail) << id;
  std::cout << "shrunk to: touchstone repro '" << id << "' --backend " << b.kind() << "\n";
}

TEST(ForeignBackends, TheContractRejectsBeforeTheLibrarySeesTheCase) {
  std::unique_ptr<ForeignBackend> both[] = {ggml(), ort()};
  for (auto& b : both) {
    if (!b) GTEST_SKIP() << "a foreign backend is not installed here";
    const CaseResult r = judge(prepare(Case::parse("rope_half/B=1,H=2,S=3,D=5/float32/buffer/seed=1")), *b);
    EXPECT_EQ(r.outcome, Outcome::rejected) << r.detail;
    EXPECT_EQ(r.rule, "head_dim_even");
    EXPECT_EQ(b->dispatches, 0u);
  }
}

// rope_half asked of ggml whatever the dtype (the mapping refuses bfloat16 because of what follows).
Mapping rope_asked_anyway(Mapping m) {
  m.express = [](const Problem& p) {
    const Tensor& x = p.inputs.at("x");
    ForeignCall c;
    c.op = "rope";
    c.attrs = {{"mode", {{"i", 2}}}, {"seq_axis", {{"i", 2}}}, {"freq_base", {{"f", 10000.0}}}};
    Tensor pos(DType::i32, {x.shape[2]});
    for (int64_t i = 0; i < pos.numel(); ++i) pos.set(i, double(i));  // the cases below start at 0
    c.inputs = {{"pos", pos}, {"x", x}};
    c.ran = "ROPE (NEOX)";
    c.outputs = {{"x", p.dtype}};
    return Expressed{std::move(c)};
  };
  return m;
}

TEST(ForeignBackends, ALibraryThatAbortsEndsOneCaseNotTheRun) {
  auto b = ggml("rope_half", rope_asked_anyway);
  if (!b) GTEST_SKIP() << "ggml-vulkan is not installed here";
  // ggml-vulkan's supports_op accepts a bfloat16 ROPE that it has no kernel for: it aborts
  // (gpu/ggml/README.md). The worker dies; the case is ERROR, and the next one runs on a fresh worker.
  const CaseResult bad = judge(prepare(Case::parse("rope_half/B=1,H=1,S=2,D=4/bfloat16/buffer/seed=2")), *b);
  EXPECT_EQ(bad.outcome, Outcome::error);
  EXPECT_NE(bad.detail.find("Aborted"), std::string::npos) << bad.detail;
  const CaseResult good = judge(prepare(Case::parse("rope_half/B=1,H=1,S=2,D=4/float32/buffer/seed=2")), *b);
  EXPECT_EQ(good.outcome, Outcome::pass) << good.detail;
  auto fine = ggml();
  const CaseResult refused = judge(prepare(Case::parse("rope_half/B=1,H=1,S=2,D=4/bfloat16/buffer/seed=2")), *fine);
  EXPECT_EQ(refused.outcome, Outcome::unsupported) << refused.detail;
}

TEST(ForeignBackends, UnexpressibleCasesAreUnsupportedWithTheReason) {
  auto g = ggml(), o = ort();
  if (!g || !o) GTEST_SKIP() << "a foreign backend is not installed here";
  const CaseResult tables = judge(prepare(Case::parse("rope_llama/B=1,S=2,Hq=2,Hkv=1,D=4,tables=random/float32/buffer/seed=3")), *g);
  EXPECT_EQ(tables.outcome, Outcome::unsupported);
  EXPECT_NE(tables.detail.find("arbitrary cos/sin tables"), std::string::npos) << tables.detail;
  const CaseResult layout = judge(prepare(Case::parse("rope_half/B=1,H=1,S=2,D=4/float32/texture3d_w/seed=3")), *o);
  EXPECT_EQ(layout.outcome, Outcome::unsupported);
  EXPECT_NE(layout.detail.find("buffers only"), std::string::npos) << layout.detail;
  for (ForeignBackend* b : {g.get(), o.get()}) {
    const CaseResult empty = judge(prepare(Case::parse("rope_half/B=0,H=1,S=1,D=4/float32/buffer/seed=1")), *b);
    EXPECT_EQ(empty.outcome, Outcome::unsupported) << empty.detail;
    EXPECT_NE(empty.detail.find("is empty"), std::string::npos) << empty.detail;
  }
  const CaseResult d12 = judge(prepare(Case::parse("sdpa/S=1,Hq=2,Hkv=1,D=12,pos=3/float16/buffer/seed=3")), *o);
  EXPECT_EQ(d12.outcome, Outcome::unsupported);
  EXPECT_NE(d12.detail.find("multiple of 8"), std::string::npos) << d12.detail;
}

// A golden that names its case and holds that case's inputs carries how they were made, so ggml,
// which computes RoPE angles itself, verifies it; without that (a file whose inputs are not its
// case's own) the tables are arbitrary to it, and the case UNSUPPORTED.
TEST(ForeignBackends, AGoldenOfItsOwnCaseVerifiesWhereTheLibraryComputesItsInputs) {
  auto b = ggml();
  if (!b) GTEST_SKIP() << "ggml-vulkan is not installed here";
  const std::string file = std::string(TS_SOURCE_DIR) + "/goldens/rope_llama-float32-pass-1.safetensors";
  GoldenCheck g = check_golden(file);
  ASSERT_EQ(g.reference.outcome, Outcome::pass) << g.reference.detail;
  EXPECT_TRUE(g.expected.problem.made_from.contains("rope_pos"));
  const CaseResult r = judge_golden(g, *b);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.detail;
  g.expected.problem.made_from = Params::object();
  EXPECT_EQ(judge_golden(g, *b).outcome, Outcome::unsupported);
}

// Query heads read kv heads in reverse: wrong wherever there are two kv heads.
Mapping kv_heads_reversed(Mapping m) {
  m.express = [](const Problem& p) {
    Problem q = p;
    for (const char* t : {"k", "v", "k_cache", "v_cache"}) {
      Tensor& x = q.inputs.at(t);
      const int64_t rows = x.shape[1], H = x.shape[2];
      const size_t head = size_t(x.shape[3]) * dtype_size(x.dtype);
      Tensor y = x;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < H; ++h)
          std::memcpy(y.bytes.data() + (r * H + h) * head, x.bytes.data() + (r * H + H - 1 - h) * head, head);
      x = std::move(y);
    }
    return ggml::sdpa().express(q);
  };
  return m;
}

TEST(ForeignBackends, AWrongKvHeadMappingIsCaughtAndShrunk) {
  auto b = ggml("sdpa", kv_heads_reversed);
  if (!b) GTEST_SKIP() << "ggml-vulkan is not installed here";
  expect_caught_and_shrunk(*b, "Hkv", 2);
}

// The cache handed over without its transposition: ORT reads [1, Cmax, Hkv, D] as [1, Hkv, Cmax, D].
Mapping cache_not_transposed(Mapping m) {
  m.express = [](const Problem& p) {
    Expressed e = ort::sdpa().express(p);
    if (e.call)
      for (auto& [name, t] : e.call->inputs)
        if (name == "past_key") {
          const Shape& c = p.inputs.at("k_cache").shape;
          t = p.inputs.at("k_cache");
          t.shape = {1, c[2], c[1], c[3]};  // the bytes as they are, declared transposed
        }
    return e;
  };
  return m;
}

TEST(ForeignBackends, ATransposedCacheMappingIsCaughtAndShrunk) {
  auto b = ort("sdpa", cache_not_transposed);
  if (!b) GTEST_SKIP() << "ort-webgpu is not installed here";
  expect_caught_and_shrunk(*b, "Hkv", 2);
}

}  // namespace
}  // namespace ts::test
