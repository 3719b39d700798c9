// Golden files: the reader refuses hostile bytes with a message naming the problem, the writer is
// canonical and regen deterministic, the committed set verifies and is current, a file written by
// another tool verifies like ours, and the manifest tells a stale set from a hand edit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "goldens/files.h"
#include "goldens/manifest.h"
#include "goldens/regen.h"
#include "goldens/sha256.h"
#include "goldens/verify.h"
#include "gpu/plans/registry.h"
#include "tests/golden_test_util.h"
#include "tools/backends.h"
#include "tools/golden_reach.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using golden_test::assemble;
using golden_test::kCommitted;
using golden_test::TempDir;

// The header (as JSON) and data area of well-formed bytes, to be broken one field at a time.
std::pair<json, std::string> split(const std::string& bytes) {
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string raw(const std::vector<double>& v) {
  std::string s;
  for (double d : v) s.append(reinterpret_cast<const char*>(&d), 8);
  return s;
}

std::string raw32(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s.append(reinterpret_cast<const char*>(&f), 4);
  return s;
}

const std::string& valid_bytes() {
  static const std::string bytes = read_file(kCommitted + "/rope_half-float32-pass-2.safetensors");
  return bytes;
}

// The FormatError message for bytes that must be refused ("" if they are accepted).
std::string refusal(const std::string& bytes) {
  try {
    parse_golden(bytes, "hostile.safetensors");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block, so padding takes a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(GoldenFormat, RoundTripsEveryDtypeAndField) {
  Golden g;
  g.op = "rope_half";
  g.dtype = DType::bf16;
  g.params = {{"mode", "half"}, {"sections", {2, 4}}};
  g.source = "a test";
  g.case_id = "rope_half/B=1/bfloat16/buffer/seed=7";
  g.seed = 7;
  g.tolerance = Tolerance{1e-5, 1.6e-2};
  g.extra["note"] = "kept verbatim";
  int k = 0;
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32}) {
    Tensor x(t, {2, 3});
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(i) - 2.5);
    g.inputs[cat("in", k++)] = x;
  }
  g.inputs["empty"] = Tensor(DType::f32, {0, 4});
  g.expected["out"] = Tensor(DType::f64, {3});
  g.expected["out"].set(1, -1.25);
  g.aux["aux.info"] = Tensor(DType::i32, {1});

  std::string bytes = serialize_golden(g);
  EXPECT_EQ((8 + bytes.size() - split(bytes).second.size()) % 8, 0u) << "data starts 8-byte aligned";
  Golden r = parse_golden(bytes, "roundtrip");
  EXPECT_EQ(r.op, g.op);
  EXPECT_EQ(r.dtype, g.dtype);
  EXPECT_EQ(r.params, g.params);
  EXPECT_EQ(r.source, g.source);
  EXPECT_EQ(r.case_id, g.case_id);
  EXPECT_EQ(r.seed, g.seed);
  ASSERT_TRUE(r.tolerance);
  EXPECT_EQ(r.tolerance->atol, 1e-5);
  EXPECT_EQ(r.tolerance->rtol, 1.6e-2);
  EXPECT_EQ(r.extra, g.extra);
  ASSERT_EQ(r.inputs.size(), g.inputs.size());
  for (auto& [name, t] : g.inputs) {
    EXPECT_EQ(r.inputs[name].dtype, t.dtype) << name;
    EXPECT_EQ(r.inputs[name].shape, t.shape) << name;
    EXPECT_EQ(r.inputs[name].bytes, t.bytes) << name;
  }
  EXPECT_EQ(r.expected.at("out").bytes, g.expected["out"].bytes);
  EXPECT_EQ(r.aux.count("aux.info"), 1u);
  EXPECT_EQ(serialize_golden(r), bytes);

  TempDir dir;
  write_golden(dir / "g.safetensors", g);
  EXPECT_EQ(read_file(dir / "g.safetensors"), bytes);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1) << "no temporary file left";
}

TEST(GoldenFormat, RefusesHostileFilesNamingTheProblem) {
  const std::string& good = valid_bytes();
  ASSERT_EQ(refusal(good), "");
  auto [header, data] = split(good);
  auto with = [&](auto edit) {
    json h = header;
    std::string d = data;
    edit(h, d);
    return assemble(h.dump(), d);
  };
  auto expect_refused = [](const std::string& bytes, const std::string& problem) {
    std::string msg = refusal(bytes);
    EXPECT_NE(msg.find("hostile.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find(problem), std::string::npos) << "want '" << problem << "' in: " << msg;
  };

  expect_refused(good.substr(0, 5), "truncated");
  expect_refused(good.substr(0, good.size() - 1), "outside the data area");
  expect_refused(good.substr(0, 100), "exceeds");
  std::string long_header = good;
  long_header[7] = '\x7f';
  expect_refused(long_header, "header length");
  expect_refused(assemble("{\"x\": [1, 2", ""), "not valid JSON");
  expect_refused(assemble("[1, 2]", ""), "must be a JSON object");
  expect_refused(with([](json& h, std::string&) { h["x"]["dtype"] = "U64"; }), "dtype \"U64\"");
  expect_refused(with([](json& h, std::string&) { h["x"]["dtype"] = 4; }), "dtype 4");
  expect_refused(with([](json& h, std::string&) { h["x"]["shape"] = {1, -5, 7, 6}; }), "non-negative integer");
  expect_refused(with([](json& h, std::string&) { h["x"]["shape"] = {1, 5.5, 7, 6}; }), "non-negative integer");
  expect_refused(with([](json& h, std::string&) { h["x"]["shape"] = {1ull << 40, 1ull << 40, 7, 6}; }), "too large");
  expect_refused(with([](json& h, std::string&) { h["x"]["shape"] = {1, 5, 7, 5}; }), "needs 700");
  expect_refused(with([](json& h, std::string&) { h["x"]["data_offsets"] = {0, 1ull << 62}; }), "outside the data area");
  expect_refused(with([](json& h, std::string&) { h["x"]["data_offsets"] = {8, 4}; }), "outside the data area");
  expect_refused(with([](json& h, std::string&) { h["x"]["data_offsets"] = {0}; }), "must be [begin, end]");
  expect_refused(with([](json& h, std::string&) { h["x"]["extra"] = 1; }), "unknown field 'extra'");
  expect_refused(with([](json& h, std::string&) { h["x"].erase("shape"); }), "has no 'shape'");
  // cos and sin have the same size: point sin at cos's bytes.
  expect_refused(with([](json& h, std::string&) { h["sin"]["data_offsets"] = h["cos"]["data_offsets"]; }), "overlap");
  expect_refused(with([](json&, std::string& d) { d += "tail"; }), "belong to no tensor");
  expect_refused(with([](json& h, std::string&) { h.erase("__metadata__"); }), "no __metadata__");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"].erase("op"); }), "metadata has no 'op'");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["format"] = "touchstone-golden/2"; }),
                 "format is 'touchstone-golden/2'");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["seed"] = 12; }), "must be a string");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["params"] = "[1]"; }), "must be a JSON object");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["params"] = "{"; }), "'params' is not valid JSON");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["expect"] = "maybe"; }), "must be pass or reject");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["dtype"] = "float8"; }), "'dtype' is 'float8'");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["seed"] = "-1"; }), "'seed' is '-1'");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["tolerance"] = "{\"atol\": -1, \"rtol\": 0}"; }),
                 "'tolerance' must be");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["case"] = "rope_llama/B=1/float32/buffer/seed=1"; }),
                 "disagrees with op");
  expect_refused(with([](json& h, std::string&) { h["__metadata__"]["expect"] = "reject"; }),
                 "expect is reject but the file holds expected output");
  // nlohmann would keep the last of two equal keys; another reader might keep the first.
  std::string dup = with([](json&, std::string&) {});
  size_t at = dup.find("\"sin\"");
  dup.replace(at, 5, "\"cos\"");
  expect_refused(dup, "key 'cos' twice");
}

// The directory's files by name, regen's lock file aside.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != ".regen.lock") m[e.path().filename().string()] = read_file(e.path().string());
  return m;
}

TEST(GoldenRegen, IsDeterministicAndRemovesOnlyItsOwnFiles) {
  TempDir dir;
  RegenSummary first = regenerate(dir.path.string());
  std::map<std::string, std::string> bytes = contents(dir.path);
  EXPECT_EQ(first.files + 1, bytes.size()) << "the goldens and MANIFEST.json";
  EXPECT_LT(first.bytes, 1u << 20);
  EXPECT_TRUE(first.left_alone.empty());

  // Removed: a golden the previous manifest listed that left the set, and a temporary file of a
  // killed run. Kept: another tool's golden, and a temporary file of a name regen does not own.
  Manifest m = parse_manifest(bytes.at("MANIFEST.json"), "MANIFEST.json");
  m.files["old.safetensors"] = sha256_hex("x");
  write_file_atomic(dir / "MANIFEST.json", serialize_manifest(m));
  write_file_atomic(dir / "old.safetensors", "x");
  write_file_atomic(dir / "foreign.safetensors", "made by another tool");
  write_file_atomic(dir / ".rope_half-float32-pass-1.safetensors.tmp-Ab12Cd", "x");
  write_file_atomic(dir / ".foreign.safetensors.tmp-Ab12Cd", "x");
  RegenSummary second = regenerate(dir.path.string());
  EXPECT_EQ(second.changed, 0u);
  EXPECT_EQ(second.removed, 1u);
  EXPECT_EQ(second.left_alone, std::vector<std::string>{"foreign.safetensors"});
  std::map<std::string, std::string> again = contents(dir.path);
  EXPECT_EQ(again["foreign.safetensors"], "made by another tool");
  EXPECT_EQ(again.erase("foreign.safetensors") + again.erase(".foreign.safetensors.tmp-Ab12Cd"), 2u);
  EXPECT_EQ(again, bytes);
}

TEST(GoldenRegen, CoversEveryRuleOfEveryOperatorAndDtype) {
  GoldenSet set = golden_set();
  std::map<std::string, int> files;
  for (auto& [name, g] : set.files) ++files[name];
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes)
      for (const Rule& r : op->rules) {
        // Only a rule whose smallest breaking case is over the size cap, or a rule about storage
        // (which no logical tensor breaks), may go without a golden.
        auto skipped = set.uncovered.find(cat(op->name, "/", dtype_name(t), "/", r.id));
        if (skipped != set.uncovered.end()) {
          EXPECT_NE(skipped->second.find(r.about_storage ? "a rule about storage" : "(cap 32768)"), std::string::npos)
              << skipped->second;
          continue;
        }
        EXPECT_EQ(files[cat(op->name, "-", dtype_name(t), "-reject-", r.id, ".safetensors")], 1) << op->name << " " << r.id;
      }
}

// Every valid golden is a case the generators draw: its values inside what the default sweep's drawn
// cases take and its shape classes among theirs (tools/golden_reach.h; regen prints the same). A golden
// beyond them is a shape the sweep meets only once, hand-picked: widen the generator.
TEST(GoldenRegen, EveryGoldenIsAShapeTheGeneratorsDraw) {
  std::vector<Case> cases;
  for (auto& [name, g] : golden_set().files)
    if (!g.reject && g.case_id) cases.push_back(Case::parse(*g.case_id));
  ASSERT_GT(cases.size(), 50u);
  for (const std::string& line : beyond_generators(cases)) ADD_FAILURE() << "beyond the generators: " << line;
  // And the check can fail: a rope_half golden with a head dim no generator draws.
  Case wide = Case::parse("rope_half/B=1,H=1,S=1,D=1024/float32/buffer/seed=1");
  const auto beyond = beyond_generators({wide});
  ASSERT_EQ(beyond.size(), 1u);
  EXPECT_NE(beyond[0].find("D=1024 outside the drawn 2..256"), std::string::npos) << beyond[0];
}

TEST(GoldenVerify, CommittedSetIsCurrentAndPassesOnTheReference) {
  std::vector<std::string> problems = verify_manifest(kCommitted, {});
  for (auto& p : problems) ADD_FAILURE() << p;
  std::vector<std::string> files = golden_files(kCommitted);
  ASSERT_GT(files.size(), 20u);
  for (auto& f : files) {
    GoldenCheck g = check_golden(f);
    ASSERT_EQ(g.error, "") << f;
    EXPECT_EQ(g.reference.outcome, g.golden.reject ? Outcome::rejected : Outcome::pass) << f << ": " << g.reference.detail;
  }
}

// Every backend that can run here agrees with the committed rope_half goldens (UNSUPPORTED: a
// stated gap). One operator keeps the test fast: its kernels compile in milliseconds, and the
// backend suites cover every operator; `touchstone golden verify` runs the whole set.
TEST(GoldenVerify, CommittedRopeHalfSetOnTheBackends) {
  std::vector<GoldenCheck> checks;
  for (auto& f : golden_files(kCommitted))
    if (fs::path(f).filename().string().rfind("rope_half-", 0) == 0) checks.push_back(check_golden(f));
  ASSERT_GE(checks.size(), 21u);  // 3 dtypes x (the smallest cases + one per class they miss + 4 rules)
  int ran = 0;
  for (const std::string& name : kernel_backends()) {
    std::string why;
    std::unique_ptr<Backend> b = open_backend(name, BackendConfig{}, &why);
    if (!b) {
      std::printf("[ golden  ] %s UNAVAILABLE: %s\n", name.c_str(), why.c_str());
      continue;
    }
    ++ran;
    for (auto& g : checks) {
      CaseResult r = judge_golden(g, *b);
      EXPECT_TRUE(r.outcome == Outcome::pass || r.outcome == Outcome::rejected || r.outcome == Outcome::unsupported)
          << g.file << " on " << name << ": " << outcome_name(r.outcome) << " " << r.detail;
    }
  }
  if (!ran) GTEST_SKIP() << "no GPU backend can run here";
}

// As another tool would write it: keys unsorted, data in another order, an aux tensor, no case,
// seed or tolerance (the operator's default applies), expected values computed independently.
TEST(GoldenVerify, ForeignFileVerifiesLikeOurs) {
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 0.25f}, cs = {0.5f, 1.0f, 0.0f, -0.5f}, sn = {0.25f, 0.0f, 1.0f, 2.0f};
  std::vector<double> out(4);
  for (int d = 0; d < 4; ++d) {
    double rot = d < 2 ? -double(x[d + 2]) : double(x[d - 2]);
    out[d] = double(x[d]) * cs[d] + rot * sn[d];
  }
  const std::string header =
      R"({"x":{"shape":[1,1,1,4],"dtype":"F32","data_offsets":[32,48]},)"
      R"("__metadata__":{"source":"numpy","op":"rope_half","params":"{}","format":"touchstone-golden/1","expect":"pass","dtype":"float32"},)"
      R"("expected.out":{"dtype":"F64","shape":[1,1,1,4],"data_offsets":[0,32]},)"
      R"("sin":{"dtype":"F32","shape":[1,4],"data_offsets":[64,80]},"cos":{"dtype":"F32","shape":[1,4],"data_offsets":[48,64]},)"
      R"("aux.note":{"dtype":"I8","shape":[3],"data_offsets":[80,83]}})";
  TempDir dir;
  write_file_atomic(dir / "foreign.safetensors", assemble(header, raw(out) + raw32(x) + raw32(cs) + raw32(sn) + "abc"));
  GoldenCheck g = check_golden(dir / "foreign.safetensors");
  ASSERT_EQ(g.error, "");
  EXPECT_FALSE(g.golden.case_id);
  EXPECT_EQ(g.golden.aux.count("aux.note"), 1u);
  EXPECT_EQ(g.reference.outcome, Outcome::pass) << g.reference.detail;
  EXPECT_EQ(g.expected.tol.rtol, find_op("rope_half")->tolerance(g.expected.problem).rtol);

  // The same inputs with cos of the wrong shape, as a reject golden: rejected with the rule id.
  const std::string reject =
      R"({"__metadata__":{"format":"touchstone-golden/1","op":"rope_half","dtype":"float32","params":"{}","expect":"reject","source":"numpy"},)"
      R"("x":{"dtype":"F32","shape":[1,1,1,4],"data_offsets":[0,16]},"cos":{"dtype":"F32","shape":[4],"data_offsets":[16,32]},)"
      R"("sin":{"dtype":"F32","shape":[1,4],"data_offsets":[32,48]}})";
  write_file_atomic(dir / "reject.safetensors", assemble(reject, raw32(x) + raw32(cs) + raw32(sn)));
  GoldenCheck r = check_golden(dir / "reject.safetensors");
  EXPECT_EQ(r.reference.outcome, Outcome::rejected) << r.reference.detail;
  EXPECT_EQ(r.reference.rule, "cos_sin_shape");
}

TEST(GoldenVerify, ReportsValuesTheReferenceNoLongerGivesAndTensorsThatDoNotFit) {
  TempDir dir;
  Golden g = read_golden(kCommitted + "/rope_half-float32-pass-2.safetensors");
  g.expected["out"].set(7, g.expected["out"].get(7) + 1e-3);
  write_golden(dir / "drift.safetensors", g);
  GoldenCheck c = check_golden(dir / "drift.safetensors");
  EXPECT_EQ(c.reference.outcome, Outcome::fail);
  EXPECT_NE(c.reference.detail.find(cat("1 of ", g.expected["out"].numel(), " elements differ from the reference")),
            std::string::npos)
      << c.reference.detail;

  g.expected["out"] = g.expected["out"].cast(DType::f32);
  write_golden(dir / "f32.safetensors", g);
  c = check_golden(dir / "f32.safetensors");
  EXPECT_EQ(c.reference.outcome, Outcome::fail);
  EXPECT_NE(c.reference.detail.find("stored as float64"), std::string::npos) << c.reference.detail;

  Golden odd = read_golden(kCommitted + "/rope_half-float32-pass-2.safetensors");
  odd.inputs["bias"] = Tensor(DType::f32, {1});
  write_golden(dir / "odd.safetensors", odd);
  EXPECT_NE(check_golden(dir / "odd.safetensors").error.find("'bias' is not an input of rope_half"), std::string::npos);

  // A case id in the file is held to the operator's declaration: a layout rope_half does not allow
  // for its tensors is a misfit, not a file verified in buffer layout instead.
  Golden laid = read_golden(kCommitted + "/rope_half-float32-pass-2.safetensors");
  ASSERT_TRUE(laid.case_id);
  std::string id = *laid.case_id;
  laid.case_id = id.replace(id.find("/buffer/"), 8, "/int8_4w/");
  write_golden(dir / "laid.safetensors", laid);
  EXPECT_NE(check_golden(dir / "laid.safetensors").error.find("cannot be stored as int8_4w"), std::string::npos);

  write_file_atomic(dir / "cut.safetensors", valid_bytes().substr(0, 300));
  c = check_golden(dir / "cut.safetensors");
  EXPECT_NE(c.error.find("cut.safetensors"), std::string::npos) << c.error;
  EXPECT_EQ(c.reference.outcome, Outcome::error);
}

TEST(GoldenManifest, TellsAHandEditFromAStaleSet) {
  TempDir dir;
  for (auto& f : golden_files(kCommitted)) fs::copy_file(f, dir.path / fs::path(f).filename());
  Manifest m = parse_manifest(read_file(kCommitted + "/MANIFEST.json"), "MANIFEST.json");
  m.sources = reference_sources();  // current, whatever the committed manifest says
  write_file_atomic(dir / "MANIFEST.json", serialize_manifest(m));
  ASSERT_EQ(verify_manifest(dir.path.string(), {}), std::vector<std::string>{});

  std::string edited = read_file(dir / "rope_cis-float32-pass-1.safetensors");
  edited.back() ^= 1;
  write_file_atomic(dir / "rope_cis-float32-pass-1.safetensors", edited);
  std::vector<std::string> p = verify_manifest(dir.path.string(), {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("rope_cis-float32-pass-1.safetensors: sha256 differs"), std::string::npos) << p[0];
  EXPECT_NE(p[0].find("edited by hand"), std::string::npos) << p[0];
  EXPECT_EQ(verify_manifest(dir.path.string(), {"rope_cis-float32-pass-2.safetensors"}), std::vector<std::string>{});

  m.sources.begin()->second = sha256_hex("an older text");
  write_file_atomic(dir / "MANIFEST.json", serialize_manifest(m));
  p = verify_manifest(dir.path.string(), {"rope_cis-float32-pass-2.safetensors"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("goldens are stale: reference sources changed since regen; run touchstone golden regen"),
            std::string::npos) << p[0];
  EXPECT_NE(p[0].find(m.sources.begin()->first + " changed"), std::string::npos) << p[0];
}

// The manifest hashes the contracts and references (reference/, and the core files that make input
// data and case ids), never a plan, a kernel or a tolerance model (gpu/): those change no golden.
TEST(GoldenManifest, HashesContractsAndReferencesAlone) {
  const std::map<std::string, std::string> sources = reference_sources();
  ASSERT_FALSE(sources.empty());
  bool contract = false;
  for (auto& [path, sha] : sources) {
    EXPECT_TRUE(path.rfind("reference/", 0) == 0 || path.rfind("core/", 0) == 0) << path;
    contract |= path == "reference/sdpa.cpp";
  }
  EXPECT_TRUE(contract) << "an operator's contract is not hashed";
  for (const OpDef* op : all_ops()) EXPECT_FALSE(sources.count(cat("gpu/plans/", op->name, ".cpp"))) << op->name;
}

TEST(GoldenExport, InvalidCaseBecomesARejectGolden) {
  Golden g = golden_from_case(Case::parse("rope_half/B=1,H=2,S=3,D=5/float16/buffer/seed=9"));
  EXPECT_TRUE(g.reject);
  EXPECT_TRUE(g.expected.empty());
  EXPECT_EQ(g.inputs.at("x").shape, (Shape{1, 2, 3, 5}));
  EXPECT_THROW(golden_from_case(Case::parse("rope_half/B=1/float16/buffer/seed=9")), UsageError);
}

}  // namespace
}  // namespace ts
