// Golden files against hostile input and careless destinations: anything but a regular file is
// refused without being read (a FIFO never blocks, /dev/zero is never streamed), JSON nesting is
// bounded, one bad file is one MALFORMED row of a run that goes on, outputs never replace a link or
// a special file, regen removes only its own files under a lock, a half-committed set never
// verifies, and the reference is held to float64 precision, not to the backends' tolerance.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/case.h"
#include "core/contract.h"
#include "goldens/files.h"
#include "goldens/manifest.h"
#include "goldens/regen.h"
#include "goldens/sha256.h"
#include "goldens/verify.h"
#include "gpu/plans/registry.h"
#include "tests/golden_test_util.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using golden_test::assemble;
using golden_test::kCommitted;
using golden_test::run_cli;
using golden_test::TempDir;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Rescues a test from a reader that blocks on a FIFO: if the guarded code is still running after
// a generous while, the watchdog opens the FIFOs for writing and closes them, which ends a blocked
// open or read with end-of-file, and records that it had to. A correct reader never opens a FIFO,
// so the test then fails instead of hanging the suite. Not a timing assertion: the wait only
// bounds how long a broken reader can stall, and a slow machine only delays the rescue.
class FifoWatchdog {
 public:
  explicit FifoWatchdog(std::vector<std::string> fifos)
      : fifos_(std::move(fifos)), thread_([this] { watch(); }) {}
  ~FifoWatchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool fired() const { return fired_; }

 private:
  void watch() {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; })) return;
    fired_ = true;
    while (!done_) {
      for (auto& f : fifos_) {
        int fd = ::open(f.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) ::close(fd);
      }
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return done_; });
    }
  }
  std::vector<std::string> fifos_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The line of `text` that starts with `start` ("" if none).
std::string row(const std::string& text, const std::string& start) {
  size_t at = text.rfind("\n" + start);
  return at == std::string::npos ? "" : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A committed file's header with one metadata value replaced.
std::string with_metadata(const std::string& key, const std::string& value) {
  std::string bytes = read_file(kCommitted + "/rope_half-float32-pass-2.safetensors");
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  nlohmann::json h = nlohmann::json::parse(bytes.substr(8, n));
  h["__metadata__"][key] = value;
  return assemble(h.dump(), bytes.substr(8 + n));
}

// A golden's params can make a small input imply a huge output: this conv2d's 9 KB of inputs,
// padded by 1024 on every side, would give 4.3 GB of int8 output and 4.3e9 multiply-adds. Its size
// is computed from shapes and params and refused before the reference (or any backend) starts.
TEST(GoldenHostile, ParamsThatAmplifyAnInputPastTheCapAreRefusedBeforeTheReferenceRuns) {
  TempDir dir;
  Golden g = golden_from_case(parse_case("q8ta_conv2d/C_in=1,C_out=1024,H=1,W=1,KH=1,KW=1/int8/buffer/seed=1"));
  g.case_id.reset();
  g.params["padding"] = {1024, 1024};
  write_file_atomic(dir / "wide.safetensors", serialize_golden(g));
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  GoldenCheck c = check_golden(dir / "wide.safetensors");
  getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(c.reference.outcome, Outcome::error);
  EXPECT_TRUE(contains(c.reference.detail, "not computed") && contains(c.reference.detail, "2147483648")) << c.reference.detail;
  EXPECT_FALSE(c.expected.error.empty()) << "no backend may run it either";
  EXPECT_LT(uint64_t(after.ru_maxrss - before.ru_maxrss) * 1024, uint64_t(256) << 20);
}

TEST(GoldenHostile, FifoNamedAsGoldenOrManifestIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string golden = dir / "x.safetensors", manifest = dir / "MANIFEST.json";
  ASSERT_EQ(::mkfifo(golden.c_str(), 0644), 0);
  ASSERT_EQ(::mkfifo(manifest.c_str(), 0644), 0);
  FifoWatchdog watchdog({golden, manifest});

  GoldenCheck g = check_golden(golden);
  EXPECT_TRUE(contains(g.error, golden) && contains(g.error, "FIFO") && contains(g.error, "not a regular file")) << g.error;
  EXPECT_EQ(g.reference.outcome, Outcome::error);
  EXPECT_THROW(read_golden(golden), FormatError);
  std::vector<std::string> p = verify_manifest(dir.path.string(), {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(contains(p[0], manifest) && contains(p[0], "FIFO")) << p[0];
  EXPECT_FALSE(watchdog.fired()) << "a reader blocked on a FIFO";
}

TEST(GoldenHostile, DevicesDirectoriesAndLinksToThemAreRefusedByName) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir.path / "zero.safetensors");
  fs::create_directory(dir.path / "d.safetensors");
  fs::create_symlink("nowhere.safetensors", dir.path / "dangling.safetensors");
  GoldenCheck zero = check_golden(dir / "zero.safetensors");
  EXPECT_TRUE(contains(zero.error, "symbolic link to /dev/zero (a character device), not a regular file")) << zero.error;
  EXPECT_TRUE(contains(check_golden(dir / "d.safetensors").error, "it is a directory")) << check_golden(dir / "d.safetensors").error;
  EXPECT_TRUE(contains(check_golden(dir / "dangling.safetensors").error, "No such file")) << check_golden(dir / "dangling.safetensors").error;
  EXPECT_THROW(read_file("/dev/zero"), std::runtime_error);

  // A link to a regular file reads like the file: links are refused for writing, not reading.
  fs::create_symlink(kCommitted + "/rope_half-float32-pass-2.safetensors", dir.path / "link.safetensors");
  EXPECT_EQ(check_golden(dir / "link.safetensors").reference.outcome, Outcome::pass);

  fs::create_symlink("/dev/zero", dir.path / "MANIFEST.json");
  std::vector<std::string> p = verify_manifest(dir.path.string(), {"link.safetensors"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(contains(p[0], "symbolic link to /dev/zero")) << p[0];
}

TEST(GoldenHostile, ReadsAreBoundedByTheFileAndTheSizeLimit) {
  TempDir dir;
  // Sparse: 1 GiB + 1 byte of size costs no disk, and must be refused before any allocation.
  const std::string big = dir / "big.safetensors";
  { std::ofstream(big).put('x'); }
  ASSERT_EQ(::truncate(big.c_str(), off_t(kMaxReadBytes + 1)), 0);
  GoldenCheck g = check_golden(big);
  EXPECT_TRUE(contains(g.error, cat(kMaxReadBytes + 1, " bytes, more than the limit of ", kMaxReadBytes))) << g.error;
  write_file_atomic(dir / "small", "0123456789");
  EXPECT_EQ(read_file(dir / "small", 10), "0123456789");
  EXPECT_THROW(read_file(dir / "small", 9), std::runtime_error);

  // Declared lengths larger than the file: the header length, and a tensor's data_offsets.
  std::string good = read_file(kCommitted + "/rope_half-float32-pass-2.safetensors");
  for (uint64_t n : {~uint64_t(0), uint64_t(1) << 63, uint64_t(good.size() - 7)}) {
    std::string bad = good;
    std::memcpy(bad.data(), &n, 8);
    write_file_atomic(dir / "len.safetensors", bad);
    EXPECT_TRUE(contains(check_golden(dir / "len.safetensors").error, cat("header length ", n, " exceeds"))) << n;
  }
  write_file_atomic(dir / "cut.safetensors", good.substr(0, good.size() - 4));
  EXPECT_TRUE(contains(check_golden(dir / "cut.safetensors").error, "outside the data area"));
}

TEST(GoldenHostile, DeeplyNestedJsonIsAFormatErrorNotAStackOverflow) {
  auto refusal = [](const std::string& bytes) {
    try {
      parse_golden(bytes, "deep.safetensors");
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_TRUE(contains(refusal(assemble("{\"x\":" + nested(100000) + "}", "")),
                       "deep.safetensors: header nests JSON deeper than 32 levels"));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100000, '}');
  EXPECT_TRUE(contains(refusal(assemble(objects, "")), "deeper than 32 levels"));
  EXPECT_TRUE(contains(refusal(with_metadata("params", "{\"a\":" + nested(100000) + "}")),
                       "metadata 'params' nests JSON deeper than 32 levels"));
  EXPECT_TRUE(contains(refusal(with_metadata("tolerance", nested(40))), "metadata 'tolerance' nests JSON"));
  // Brackets inside strings are text, however many; 32 levels of params are allowed.
  EXPECT_EQ(refusal(with_metadata("source", std::string(100000, '[') + "\\\"" + std::string(100000, '{'))), "accepted");
  std::string params = "{\"a\":" + nested(31) + "}";
  EXPECT_EQ(refusal(with_metadata("params", params)), "accepted");
  EXPECT_TRUE(contains(refusal(with_metadata("params", "{\"a\":" + nested(32) + "}")), "deeper than 32"));

  EXPECT_THROW(parse_manifest("{\"format\":" + nested(100000) + "}", "MANIFEST.json"), FormatError);
}

TEST(GoldenHostile, VerifyAndShowReportEachBadFileAndGoOn) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.safetensors").c_str(), 0644), 0);
  fs::create_symlink("/dev/zero", dir.path / "zero.safetensors");
  write_file_atomic(dir / "deep.safetensors", assemble("{\"x\":" + nested(100000) + "}", ""));
  const std::string good = kCommitted + "/rope_half-float32-pass-2.safetensors";
  FifoWatchdog watchdog({dir / "fifo.safetensors"});
  std::string files;
  for (auto name : {"fifo", "zero", "deep"}) files += " " + quoted(dir / cat(name, ".safetensors"));
  files += " " + quoted(good);

  auto [rc, out] = run_cli("golden verify --reference-only" + files);
  EXPECT_EQ(rc, 1) << out;
  for (auto name : {"fifo", "zero", "deep"}) {
    std::string r = row(out, dir / cat(name, ".safetensors "));
    EXPECT_TRUE(r.ends_with("  MALFORMED")) << name << "\n" << out;
  }
  EXPECT_TRUE(contains(row(out, good + " "), "  pass    PASS")) << "the good file after the bad ones is verified\n" << out;
  EXPECT_TRUE(contains(out, "4 golden files verified")) << out;

  auto [show_rc, show] = run_cli("golden show" + files);
  EXPECT_EQ(show_rc, 1) << show;
  EXPECT_TRUE(contains(show, "FIFO") && contains(show, "/dev/zero") && contains(show, "deeper than 32")) << show;
  EXPECT_TRUE(contains(show, "op rope_half, dtype float32, expect pass")) << show;
  EXPECT_FALSE(watchdog.fired()) << "the CLI blocked on a FIFO";
}

TEST(GoldenOutput, RefusesLinksSpecialFilesAndMissingDirectoriesBeforeWriting) {
  TempDir dir;
  auto refusal = [](const std::string& path) {
    try {
      check_output_path(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  write_file_atomic(dir / "target", "keep me");
  fs::create_symlink(dir / "target", dir.path / "link");
  fs::create_symlink(dir / "absent", dir.path / "dangling");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::create_directory(dir.path / "sub");

  EXPECT_EQ(refusal(dir / "new.safetensors"), "accepted");
  EXPECT_EQ(refusal(dir / "target"), "accepted");
  EXPECT_TRUE(contains(refusal(dir / "link"), "is a symbolic link to " + dir / "target")) << refusal(dir / "link");
  EXPECT_TRUE(contains(refusal(dir / "dangling"), "symbolic link")) << refusal(dir / "dangling");
  EXPECT_TRUE(contains(refusal("/dev/null"), "cannot write output /dev/null: it is a character device")) << refusal("/dev/null");
  EXPECT_TRUE(contains(refusal(dir / "fifo"), "it is a FIFO")) << refusal(dir / "fifo");
  EXPECT_TRUE(contains(refusal(dir / "sub"), "it is a directory")) << refusal(dir / "sub");
  EXPECT_TRUE(contains(refusal(dir / "missing/out.xml"), "directory " + dir / "missing" + " does not exist"))
      << refusal(dir / "missing/out.xml");
  EXPECT_TRUE(contains(refusal(dir / "target/out.xml"), "Not a directory")) << refusal(dir / "target/out.xml");
  EXPECT_TRUE(contains(refusal(dir / "sub/"), "names a directory")) << refusal(dir / "sub/");
  EXPECT_TRUE(contains(refusal(""), "empty"));

  // write_file_atomic applies the same rules, and nothing is left behind.
  EXPECT_THROW(write_file_atomic(dir / "link", "x"), UsageError);
  EXPECT_THROW(write_file_atomic(dir / "dangling", "x"), UsageError);
  EXPECT_THROW(write_file_atomic("/dev/null", "x"), UsageError);
  EXPECT_EQ(read_file(dir / "target"), "keep me");
  EXPECT_TRUE(fs::is_symlink(dir.path / "link"));
  EXPECT_FALSE(fs::exists(dir.path / "absent"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 5) << "no temporary file left";

  // A destination swapped for a link after the check is still refused at the rename.
  std::string temp = write_temp_beside(dir / "late", "x");
  fs::create_symlink(dir / "target", dir.path / "late");
  EXPECT_THROW(commit_temp(temp, dir / "late"), std::runtime_error);
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(read_file(dir / "target"), "keep me");
}

TEST(GoldenOutput, ExportChecksItsDestinationFirst) {
  TempDir dir;
  const std::string id = quoted("rope_half/B=1,H=2,S=3,D=8/float16/buffer/seed=5");
  write_file_atomic(dir / "target", "keep me");
  fs::create_symlink(dir / "target", dir.path / "link.safetensors");
  for (const std::string& out : {dir / "link.safetensors", std::string("/dev/null"), dir / "missing/x.safetensors"}) {
    auto [rc, text] = run_cli("golden export " + id + " -o " + quoted(out));
    EXPECT_EQ(rc, 2) << text;
    EXPECT_TRUE(contains(text, "error: cannot write output " + out)) << text;
  }
  EXPECT_EQ(read_file(dir / "target"), "keep me");
  EXPECT_TRUE(fs::is_symlink(dir.path / "link.safetensors"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  auto [rc, text] = run_cli("golden export " + id + " -o " + quoted(dir / "ok.safetensors"));
  EXPECT_EQ(rc, 0) << text;
  EXPECT_EQ(check_golden(dir / "ok.safetensors").reference.outcome, Outcome::pass);
}

// The lock file of a regen, held as a running regen would hold it.
struct HeldLock {
  int fd;
  explicit HeldLock(const std::string& dir) : fd(::open((fs::path(dir) / ".regen.lock").c_str(), O_RDWR | O_CREAT, 0644)) {
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  }
  ~HeldLock() { ::close(fd); }
};

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> v;
  for (auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(GoldenRegenSafety, ASecondRegenRefusesWhileTheLockIsHeldAndConcurrentRegensEndConsistent) {
  TempDir dir;
  {
    HeldLock held(dir.path.string());
    try {
      regenerate(dir.path.string());
      ADD_FAILURE() << "regen ran while another held the lock";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "another golden regen is running in " + dir.path.string())) << e.what();
      EXPECT_TRUE(contains(e.what(), ".regen.lock")) << e.what();
    }
    EXPECT_EQ(names_in(dir.path), std::vector<std::string>{".regen.lock"}) << "nothing written";
  }
  // Two at once: whichever order they take the lock in, no temporary file is left and the set is
  // whole; one that found the lock taken says so.
  std::string errors[2];
  std::thread a([&] {
    try {
      regenerate(dir.path.string());
    } catch (const std::exception& e) {
      errors[0] = e.what();
    }
  });
  try {
    regenerate(dir.path.string());
  } catch (const std::exception& e) {
    errors[1] = e.what();
  }
  a.join();
  EXPECT_TRUE(errors[0].empty() || errors[1].empty()) << errors[0] << " / " << errors[1];
  for (auto& e : errors) EXPECT_TRUE(e.empty() || contains(e, "another golden regen is running")) << e;
  for (auto& name : names_in(dir.path)) EXPECT_FALSE(is_temp_name(name)) << name;
  EXPECT_EQ(verify_manifest(dir.path.string(), {}), std::vector<std::string>{});
}

TEST(GoldenRegenSafety, AHalfCommittedSetNeverVerifiesAndTheNextRegenRepairsIt) {
  TempDir full, partial;
  RegenSummary s = regenerate(full.path.string());
  // What a first regen killed between its renames and its manifest leaves: the files, the
  // marker, no manifest; plus a file the killed regen was committing that the set no longer has.
  for (auto& f : golden_files(full.path.string())) fs::copy_file(f, partial.path / fs::path(f).filename());
  write_file_atomic(partial / "gone.safetensors", "from an older set");
  write_file_atomic(partial / std::string(kRegenMarkerName),
                    cat(sha256_hex("from an older set"), " gone.safetensors\n", sha256_hex(read_file(full / "rope_half-float32-pass-1.safetensors")),
                        " rope_half-float32-pass-1.safetensors\n"));
  std::vector<std::string> p = verify_manifest(partial.path.string(), {});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(contains(p[0], "never finished")) << p[0];
  EXPECT_TRUE(contains(p[1], "MANIFEST.json: missing")) << p[1];
  // The marker fails the set even where the manifest is present and every file matches it.
  fs::copy_file(full.path / "MANIFEST.json", partial.path / "MANIFEST.json");
  fs::remove(partial.path / "gone.safetensors");
  p = verify_manifest(partial.path.string(), {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(contains(p[0], std::string(kRegenMarkerName) + ": a golden regen started")) << p[0];
  EXPECT_EQ(verify_manifest(partial.path.string(), {"rope_half-float32-pass-1.safetensors"}), p) << "named files too";

  fs::remove(partial.path / "MANIFEST.json");
  write_file_atomic(partial / "gone.safetensors", "from an older set");
  RegenSummary r = regenerate(partial.path.string());
  EXPECT_EQ(r.removed, 1u) << "the marker's file that left the set";
  EXPECT_FALSE(fs::exists(partial.path / "gone.safetensors"));
  EXPECT_FALSE(fs::exists(partial.path / std::string(kRegenMarkerName)));
  EXPECT_EQ(verify_manifest(partial.path.string(), {}), std::vector<std::string>{});
  EXPECT_EQ(s.files, r.files);
}

// Regen removes a file that left the set only when its bytes are the ones it wrote: a name in the
// previous manifest or in a killed regen's marker is not enough, since someone may have put their
// own file there since. Those are left and reported with the reason.
TEST(GoldenRegenSafety, RegenRemovesOnlyFilesWhoseHashIsTheOneItWrote) {
  TempDir dir;
  regenerate(dir.path.string());
  Manifest m = parse_manifest(read_file(dir / "MANIFEST.json"), "MANIFEST.json");
  m.files["listed.safetensors"] = sha256_hex("what regen wrote");
  m.files["replaced.safetensors"] = sha256_hex("what regen wrote");
  write_file_atomic(dir / "MANIFEST.json", serialize_manifest(m));
  write_file_atomic(dir / "listed.safetensors", "what regen wrote");
  write_file_atomic(dir / "replaced.safetensors", "someone's own file, put in place since");
  // A killed regen's marker: one file with the hash it was renaming in, one without any (an older
  // marker's line), one whose bytes are not the hash listed with it.
  write_file_atomic(dir / "marked.safetensors", "renamed in by the killed regen");
  write_file_atomic(dir / "bare.safetensors", "named without a hash");
  write_file_atomic(dir / "wrong.safetensors", "not what the marker says");
  write_file_atomic(dir / std::string(kRegenMarkerName),
                    cat(sha256_hex("renamed in by the killed regen"), " marked.safetensors\nbare.safetensors\n",
                        sha256_hex("something else"), " wrong.safetensors\n"));
  RegenSummary r = regenerate(dir.path.string());
  EXPECT_EQ(r.removed, 2u);
  EXPECT_FALSE(fs::exists(dir.path / "listed.safetensors"));
  EXPECT_FALSE(fs::exists(dir.path / "marked.safetensors"));
  EXPECT_EQ(read_file(dir / "replaced.safetensors"), "someone's own file, put in place since");
  EXPECT_EQ(read_file(dir / "bare.safetensors"), "named without a hash");
  EXPECT_EQ(read_file(dir / "wrong.safetensors"), "not what the marker says");
  EXPECT_EQ(r.left_alone, (std::vector<std::string>{"bare.safetensors", "replaced.safetensors", "wrong.safetensors"}));
  ASSERT_EQ(r.not_ours.size(), 3u);
  EXPECT_TRUE(contains(r.not_ours["replaced.safetensors"], "is not the one regen wrote")) << r.not_ours["replaced.safetensors"];
  EXPECT_TRUE(contains(r.not_ours["bare.safetensors"], "without its sha256")) << r.not_ours["bare.safetensors"];
  EXPECT_TRUE(contains(r.not_ours["wrong.safetensors"], sha256_hex("something else"))) << r.not_ours["wrong.safetensors"];

  auto [rc, out] = run_cli("golden regen --dir " + quoted(dir.path.string()));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(contains(out, "left alone: replaced.safetensors")) << out;
}

TEST(GoldenRegenSafety, AHostileManifestNeverMakesRegenRemoveOtherFiles) {
  TempDir outer;
  fs::create_directory(outer.path / "set");
  write_file_atomic(outer / "victim.safetensors", "not regen's");
  Manifest m;
  m.sources = reference_sources();
  m.files["../victim.safetensors"] = "0";
  write_file_atomic(outer / "set/MANIFEST.json", serialize_manifest(m));
  EXPECT_THROW(parse_manifest(read_file(outer / "set/MANIFEST.json"), "MANIFEST.json"), FormatError);
  write_file_atomic(outer / "set/" + std::string(kRegenMarkerName), "../victim.safetensors\n/tmp/x.safetensors\n");
  RegenSummary r = regenerate((outer.path / "set").string());
  EXPECT_EQ(r.removed, 0u);
  EXPECT_EQ(read_file(outer / "victim.safetensors"), "not regen's");
}

TEST(GoldenVerifySet, ADirectoryWithoutManifestIsNotAllGood) {
  TempDir dir;
  fs::copy_file(kCommitted + "/rope_half-float32-pass-2.safetensors", dir.path / "a.safetensors");
  std::vector<std::string> p = verify_manifest(dir.path.string(), {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(contains(p[0], "MANIFEST.json: missing, so whether the set in " + dir.path.string())) << p[0];
  EXPECT_EQ(verify_manifest(dir.path.string(), {"a.safetensors"}), std::vector<std::string>{}) << "named files need none";

  auto [rc, out] = run_cli("golden verify --reference-only --dir " + quoted(dir.path.string()));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_TRUE(contains(out, "MANIFEST.json: missing")) << out;
  EXPECT_FALSE(contains(out, "all good")) << out;
  auto [named_rc, named] = run_cli("golden verify --reference-only " + quoted(dir / "a.safetensors"));
  EXPECT_EQ(named_rc, 0) << named;
  EXPECT_TRUE(contains(named, "all good")) << named;
}

// The reference is held to float64 precision: values that went through float32 (or were scaled
// by 1%) on their way into a file fail, whatever tolerance the file states for backends.
TEST(GoldenVerifyReference, ExpectedValuesRoundedOrScaledFail) {
  TempDir dir;
  auto verdict = [&](Golden g, const std::string& name) {
    write_golden(dir / name, g);
    return check_golden(dir / name).reference;
  };
  for (auto file : {"rope_half-float32-pass-2", "sdpa-float32-pass-3", "rope_matrix-float32-pass-1"}) {
    Golden g = read_golden(kCommitted + "/" + file + ".safetensors");
    ASSERT_EQ(verdict(g, "same.safetensors").outcome, Outcome::pass) << file;
    Tensor& out = g.expected.at("out");
    Tensor rounded = out.cast(DType::f32).cast(DType::f64);
    ASSERT_NE(rounded.bytes, out.bytes) << file << ": rounding to float32 changes some value";
    out = rounded;
    CaseResult r = verdict(g, "rounded.safetensors");
    EXPECT_EQ(r.outcome, Outcome::fail) << file << ": " << r.detail;
    EXPECT_TRUE(contains(r.detail, "differ from the reference")) << r.detail;
    // A file's own tolerance is for backends: a loose one does not loosen the reference check.
    g.tolerance = Tolerance{1.0, 1.0};
    EXPECT_EQ(verdict(g, "loose.safetensors").outcome, Outcome::fail) << file;
  }
  for (auto file : {"rope_half-bfloat16-pass-1", "rope_llama-bfloat16-pass-2", "rope_cis-bfloat16-pass-3"}) {
    Golden g = read_golden(kCommitted + "/" + file + ".safetensors");
    for (auto& [name, t] : g.expected)
      if (t.dtype == DType::f64)
        for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * 1.01);
    CaseResult r = verdict(g, "scaled.safetensors");
    EXPECT_EQ(r.outcome, Outcome::fail) << file << ": " << r.detail;
  }
}

}  // namespace
}  // namespace ts
