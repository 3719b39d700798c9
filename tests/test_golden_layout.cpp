// Goldens across dtypes and layouts:
//  - the bfloat16 holdout: files written by tests/holdout/make_bf16_goldens.py (numpy float64 on
//    inputs rounded to bfloat16 by hand; no Touchstone code) verify like ours, on the reference to
//    float64 precision and on every backend within the bfloat16 tolerance, and a wrong value fails;
//  - `golden verify --layout STORAGE` runs logical goldens through a chosen storage on the backends,
//    skips (saying why) a golden whose operator does not declare it, and refuses bad storages.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/contract.h"
#include "goldens/files.h"
#include "goldens/verify.h"
#include "gpu/plans/registry.h"
#include "tests/golden_test_util.h"
#include "tools/backends.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using golden_test::kCommitted;
using golden_test::run_cli;
using golden_test::TempDir;

const std::string kHoldout = std::string(TS_SOURCE_DIR) + "/tests/holdout";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> holdout_files() {
  std::vector<std::string> files = golden_files(kHoldout);
  EXPECT_EQ(files.size(), 2u) << "rope_llama and sdpa, written by make_bf16_goldens.py";
  return files;
}

TEST(GoldenHoldoutBf16, VerifiesOnTheReference) {
  for (auto& f : holdout_files()) {
    GoldenCheck g = check_golden(f);
    ASSERT_EQ(g.error, "") << f;
    EXPECT_EQ(g.golden.dtype, DType::bf16) << f;
    EXPECT_FALSE(g.golden.case_id) << f << ": a foreign file, no case id to rebuild it from";
    EXPECT_TRUE(contains(g.golden.source, "numpy")) << g.golden.source;
    for (auto& [name, t] : g.golden.inputs) EXPECT_EQ(t.dtype, DType::bf16) << f << " " << name;
    EXPECT_EQ(g.reference.outcome, Outcome::pass) << f << ": " << g.reference.detail;
    // No tolerance in the file: the operator's own, bfloat16's store (2^-8) included.
    EXPECT_FALSE(g.golden.tolerance) << f;
    EXPECT_EQ(g.expected.tol.rtol, 0x1p-8) << f;
  }
}

TEST(GoldenHoldoutBf16, AWrongValueFails) {
  TempDir dir;
  for (auto& f : holdout_files()) {
    Golden g = read_golden(f);
    for (auto& [name, t] : g.expected) {
      Golden bad = g;
      Tensor& x = bad.expected.at(name);
      // Computed outputs (float64) off by 1e-9 relative; exact copies (bfloat16) by one ulp.
      x.set(1, t.dtype == DType::f64 ? t.get(1) * (1 + 1e-9) : t.get(1) * (1 + 0x1p-7));
      ASSERT_NE(x.bytes, t.bytes);
      const std::string path = dir / (name + ".safetensors");
      write_golden(path, bad);
      CaseResult r = check_golden(path).reference;
      EXPECT_EQ(r.outcome, Outcome::fail) << f << " " << name << ": " << r.detail;
    }
  }
}

// Every backend has bfloat16 kernels: the holdout files PASS on each.
TEST(GoldenHoldoutBf16, VerifiesOnTheBackends) {
  std::vector<GoldenCheck> checks;
  for (auto& f : holdout_files()) checks.push_back(check_golden(f));
  int ran = 0;
  for (const std::string& name : kernel_backends()) {
    std::string why;
    std::unique_ptr<Backend> b = open_backend(name, BackendConfig{}, &why);
    if (!b) continue;
    ++ran;
    for (auto& g : checks) {
      CaseResult r = judge_golden(g, *b);
      EXPECT_EQ(r.outcome, Outcome::pass)
          << g.file << " on " << name << ": " << outcome_name(r.outcome) << " " << r.detail;
    }
  }
  if (!ran) GTEST_SKIP() << "no GPU backend can run here";
}

TEST(GoldenVerifyLayout, BadStoragesAreUsageErrors) {
  const std::string file = "'" + kCommitted + "/rope_half-float32-pass-2.safetensors'";
  struct Bad {
    std::string args, message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"--layout texture3d_q", "unknown layout 'texture3d_q'"},
           {"--layout 'buffer;cos'", "must be <tensor>=<layout>"},
           {"--layout 'buffer;cosine=texture3d_w'", "no operator has a tensor named 'cosine'"},
           {"--layout texture3d_c --reference-only", "--reference-only runs none"},
       }) {
    auto [rc, out] = run_cli("golden verify " + file + " " + b.args);
    EXPECT_EQ(rc, 2) << b.args << "\n" << out;
    EXPECT_TRUE(contains(out, b.message)) << b.args << "\n" << out;
  }
}

// sdpa's caches are buffers only: under --layout texture3d_c every sdpa golden is skipped with that
// reason, and with nothing left to run the command is a usage error.
TEST(GoldenVerifyLayout, GoldensWhoseOperatorCannotTakeTheStorageAreSkipped) {
  std::string backend;
  for (const std::string& name : kernel_backends()) {
    std::string why;
    if (open_backend(name, BackendConfig{}, &why)) {
      backend = name;
      break;
    }
  }
  if (backend.empty()) GTEST_SKIP() << "no GPU backend can run here";
  const std::string sdpa = kCommitted + "/sdpa-float32-pass-1.safetensors";
  auto [rc, out] = run_cli("golden verify '" + sdpa + "' --layout texture3d_c --backend " + backend);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_TRUE(contains(out, "SKIPPED")) << out;
  EXPECT_TRUE(contains(out, "tensor k_cache cannot be stored as texture3d_c (k_cache allows: buffer)")) << out;
  EXPECT_TRUE(contains(out, "no golden's operator declares --layout 'texture3d_c'")) << out;
}

// Goldens are logical: the same files pass in a mixed storage, on each backend. Needs the layout
// accessor kernels (gpu/ACCESSORS.md) to pass.
TEST(GoldenVerifyLayout, LogicalGoldensPassInAnotherStorage) {
  int ran = 0;
  for (const std::string& name : kernel_backends()) {
    std::string why;
    if (!open_backend(name, BackendConfig{}, &why)) continue;
    ++ran;
    const std::string files = "'" + kCommitted + "/rope_half-float32-pass-2.safetensors' '" + kCommitted +
                              "/rope_half-float16-pass-1.safetensors' '" + kCommitted +
                              "/sdpa-float32-pass-1.safetensors' '" + kHoldout + "/rope_llama-bfloat16-numpy.safetensors'";
    auto [rc, out] = run_cli("golden verify " + files + " --backend " + name +
                             " --layout 'texture3d_c;cos=buffer;out=texture3d_w;xk_out=texture3d_h'");
    EXPECT_EQ(rc, 0) << name << "\n" << out;
    EXPECT_TRUE(contains(out, "Backends store every tensor as --layout")) << out;
    EXPECT_TRUE(contains(out, "sdpa-float32-pass-1.safetensors: sdpa: ")) << "sdpa skipped, with the reason\n" << out;
    EXPECT_TRUE(contains(out, "1 of them by the reference alone")) << out;
  }
  if (!ran) GTEST_SKIP() << "no GPU backend can run here";
}

}  // namespace
}  // namespace ts
