// Case ids: printing and parsing are inverse, malformed ids are usage errors naming the problem,
// and the data a case id makes is a pure function of the id.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>

#include "core/case.h"
#include "core/case_rules.h"
#include "core/rng.h"
#include "core/runner.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {

TEST(CaseId, RoundTrips) {
  const std::string id = "rope_llama/B=1,S=1,Hq=32,Hkv=8,D=128/float16/buffer/seed=1234";
  Case c = Case::parse(id);
  EXPECT_EQ(c.op, "rope_llama");
  EXPECT_EQ(c.get("Hq"), 32);
  EXPECT_EQ(c.dtype, DType::f16);
  EXPECT_EQ(c.seed, 1234u);
  EXPECT_EQ(c.id(), id);
  EXPECT_EQ(Case::parse("rope_matrix/D=128,sections=44:44:40/float32/buffer/seed=0").list("sections"),
            (std::vector<int64_t>{44, 44, 40}));
}

TEST(CaseId, MalformedIdsAreUsageErrors) {
  for (const char* bad : {"rope_llama", "rope_llama/B=1/float32/buffer", "rope_llama/B/float32/buffer/seed=1",
                          "rope_llama/B=1/float99/buffer/seed=1", "rope_llama/B=1/float32/buffer/seed=x",
                          "rope_llama/B=1,B=2/float32/buffer/seed=1", "rope_llama/B=1/float32/buffer/seed=-3"}) {
    EXPECT_THROW(Case::parse(bad), UsageError) << bad;
  }
  try {
    Case::parse("rope_llama/B=1/float99/buffer/seed=1");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("float99"), std::string::npos) << e.what();
  }
}

// The generator is specified in core/rng.h; these constants pin it so any change is deliberate.
TEST(CaseData, CounterBasedGeneratorIsPinned) {
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(fnv1a64("xq"), 0x08f14707b58ddd82ull);
  Stream s(1234, "xq");
  double u = s.unit(0);
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
  EXPECT_EQ(Stream(1234, "xq").bits(7), s.bits(7));
  EXPECT_NE(Stream(1234, "xk").bits(7), s.bits(7));
}

TEST(CaseData, SameIdSameBytes) {
  for (const OpDef* op : all_ops()) {
    const bool f16 = std::find(op->dtypes.begin(), op->dtypes.end(), DType::f16) != op->dtypes.end();
    Case c = op->edge_cases(f16 ? DType::f16 : op->dtypes.front()).front();
    Problem a = op->make(Case::parse(c.id())), b = op->make(c);
    for (auto& [name, t] : a.inputs) EXPECT_EQ(t.bytes, b.inputs.at(name).bytes) << c.id() << " " << name;
  }
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Each id below once ran as something it did not say (an identity rotation, a default layout, an
// undefined dtype) or crashed; now each is a usage error that names the culprit.
TEST(StrictCaseId, HostileIdsAreUsageErrorsNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/texture3d/seed=1", "unknown layout 'texture3d'"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/banana/seed=1", "unknown layout 'banana'"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=128,Pos=17/float32/buffer/seed=1", "unknown variable 'Pos'"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/int8/buffer/seed=1", "dtype int8 is not defined"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/int32/buffer/seed=1", "dtype int32 is not defined"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=4/float64/buffer/seed=1", "dtype float64 is not defined"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=4,pos=9223372036854775807,Cmax=8/float32/buffer/seed=1", "pos=9223372036854775807 is out of range"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=4,impl=fast/float32/buffer/seed=1", "impl=fast is not one of: naive, tiled"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=four/float32/buffer/seed=1", "D=four is not an integer"},
      {"sdpa/Hq=1,Hkv=1,D=4/float32/buffer/seed=1", "required variable 'S' is missing"},
      {"rope_cis/B=1,N=1,C=2,fshape=n_c2/float32/buffer/seed=1", "fshape=n_c2 is not one of"},
      {"rope_matrix/B=1,H=1,S=1,D=8,sections=4:x/float32/buffer/seed=1", "sections=4:x"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2,xk_dtype=float99/float32/buffer/seed=1", "xk_dtype=float99 is not a dtype"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2,out_dtype=float16/float32/buffer/seed=1", "unknown variable 'out_dtype'"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=4/float32/texture3d_c/seed=1", "k_cache cannot be stored as texture3d_c (k_cache allows: buffer)"},
      {"sdpa/S=1,Hq=1,Hkv=1,D=4/float32/buffer;out=texture3d_h/seed=1", "out cannot be stored as texture3d_h (out allows: buffer, texture3d_w)"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/buffer;xq=int8_4w/seed=1", "xq cannot be stored as int8_4w"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/buffer;foo=buffer/seed=1", "'foo', which is not a tensor"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/buffer;xq=buffer;xq=buffer/seed=1", "given a layout twice"},
      {"rope_llama/B=1,S=1,Hq=1,Hkv=1,D=2/float32/buffer;xq/seed=1", "must be <tensor>=<layout>"},
      {"conv9/B=1/float32/buffer/seed=1", "unknown operator 'conv9'"},
  };
  for (auto& [id, why] : bad) {
    try {
      prepare(parse_case(id));
      ADD_FAILURE() << id << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << id << ": " << e.what();
    }
  }
}

// Sizes are checked before anything is allocated: an int64 overflow and a case past kMaxCaseBytes
// are usage errors (the second once built its float64 reference and was killed for memory).
TEST(StrictCaseId, OversizedCasesAreRefusedBeforeAllocating) {
  for (const char* id : {"rope_llama/B=1,S=200000,Hq=32,Hkv=8,D=128/float32/buffer/seed=1",
                         "rope_llama/B=16777216,S=16777216,Hq=16777216,Hkv=1,D=2/float32/buffer/seed=1",
                         "rope_half/B=16777216,H=16777216,S=16777216,D=16777216/float16/buffer/seed=1",
                         "sdpa/S=1,Hq=16777216,Hkv=1,D=16777216,pos=0/float32/buffer/seed=1"}) {
    EXPECT_THROW(prepare(parse_case(id)), CaseTooLarge) << id;
  }
}

// The peak resident memory of this process so far, in bytes.
uint64_t peak_rss() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return uint64_t(u.ru_maxrss) * 1024;
}

// The cap is computed from shapes before anything is built: each of these cases has inputs that
// pass one at a time (1.2-1.5 GB of them, 10-30 s of filling) and outputs or a second input that
// take it past 2 GiB. Refused after building its inputs, a case would raise this process's peak by
// a gigabyte or more; refused from its shapes, by nothing.
TEST(StrictCaseId, CasesPastTheCapAreRefusedFromTheirShapesBeforeAnyInputIsBuilt) {
  const uint64_t before = peak_rss();
  for (const char* id : {// xq 1.47 GB then xk 1.1 GB: the second input passes the cap
                         "rope_llama/B=1,S=90000,Hq=32,Hkv=24,D=128/float32/buffer/seed=1",
                         // 1.2 GB of inputs, 2.5 GB of float64 outputs
                         "rope_llama/B=1,S=60000,Hq=32,Hkv=8,D=128/float32/buffer/seed=1",
                         // 1.5 GB of x, 3 GB of float64 outputs
                         "rope_half/B=1,H=32,S=90000,D=128/float32/buffer/seed=1",
                         // 4 bytes of input, 4.3 GB of int8 output: the padding amplifies it
                         "q8ta_conv2d/C_in=1,C_out=1024,H=1,W=1,KH=1,KW=1,ph=1024,pw=1024/int8/buffer/seed=1"}) {
    try {
      prepare(parse_case(id));
      ADD_FAILURE() << id << " was accepted";
    } catch (const CaseTooLarge& e) {
      EXPECT_NE(std::string(e.what()).find("2147483648"), std::string::npos) << id << ": " << e.what();
    }
  }
  EXPECT_LT(peak_rss() - before, uint64_t(256) << 20) << "a case was built before it was refused";
}

// Every case the sweep and the properties draw, and every edge case, is a strictly valid id.
TEST(StrictCaseId, EdgeAndDrawnCasesAreDeclared) {
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      for (const Case& c : op->edge_cases(t)) EXPECT_NO_THROW(check_case(*op, parse_case(c.id()))) << c.id();
      for (uint64_t k = 0; k < 60; ++k) {
        Case c = draw_case(*op, t, k % 3 != 0, k, int(k * 5 % 101));
        EXPECT_NO_THROW(check_case(*op, parse_case(c.id()))) << c.id();
      }
    }
}

}  // namespace
}  // namespace ts
