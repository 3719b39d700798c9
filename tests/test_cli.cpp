// The touchstone binary as a user (or a CI job) runs it: usage errors exit 2 before any work,
// JUnit destinations are checked first and never left stale, signals end a sweep with a partial
// report, and a backend that cannot run is an error when named and loud when not.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu/kernel_source.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tools/help_examples.h"
#include "tools/junit.h"

extern char** environ;

namespace ts {
namespace {

namespace fs = std::filesystem;

struct Exit {
  int code = -1;    // exit status, or 128 + signal
  std::string out;  // stdout and stderr together
};

// Runs build/touchstone. `watch` sees the output so far after each read and may signal the
// process. `bound_s` only stops a run that hangs (the test then fails); it measures nothing.
Exit spawn(const std::vector<std::string>& words, const std::vector<std::string>& env = {},
           const std::function<void(const std::string&, pid_t)>& watch = {}, int bound_s = 300) {
  std::vector<char*> argv, envp;
  for (auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));  // first: getenv takes the first match
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  Exit r;
  if (rc != 0) {
    ::close(fds[0]);
    ADD_FAILURE() << "cannot start " << argv[0];
    return r;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n == 0) break;
      if (n > 0) r.out.append(buf, size_t(n));
    }
    if (watch) watch(r.out, pid);
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "touchstone did not end within " << bound_s << " s: " << r.out.substr(0, 2000);
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

Exit touchstone(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
               const std::function<void(const std::string&, pid_t)>& watch = {}, int bound_s = 300) {
  std::vector<std::string> words = {std::string(TS_BINARY_DIR) + "/touchstone"};
  words.insert(words.end(), args.begin(), args.end());
  return spawn(words, env, watch, bound_s);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

std::string temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("ts_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// Whether python's XML parser accepts the file (it rejects bad UTF-8, control characters and
// unescaped specials). False with a reason when no python3 is found.
bool python_parses_xml(const std::string& path, std::string* why) {
  for (const char* py : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (::access(py, X_OK) != 0) continue;
    const std::string cmd = std::string(py) + " -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' '" +
                            path + "' 2>&1";
    *why = "python3 refused " + path;
    return std::system(cmd.c_str()) == 0;
  }
  *why = "no python3";
  return false;
}

bool have_python() { return ::access("/usr/bin/python3", X_OK) == 0 || ::access("/usr/local/bin/python3", X_OK) == 0; }

// The sweep these tests start: one op on lavapipe, enough cases that running it whole would hang
// the test, so a usage error found only after the sweep cannot pass unnoticed.
const std::vector<std::string> kLongSweep = {"check", "--op", "rope_cis", "--backend", "vulkan", "--cases", "10000000"};
const std::vector<std::string> kAnyCases = {"check", "--op", "rope_cis", "--backend", "vulkan"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Cli, CasesOutsideTheirRangeAreUsageErrors) {
  for (const char* n : {"0", "-1", "2147483648", "4294967297", "10000001", "1e3", "+5", "0x10", " 7"}) {
    Exit r = touchstone(with(kAnyCases, {"--cases", n}));
    EXPECT_EQ(r.code, 2) << "--cases '" << n << "': " << r.out;
    EXPECT_NE(r.out.find("1..10,000,000"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("case runs"), std::string::npos) << "a sweep ran: " << r.out;
  }
  Exit r = touchstone(with(kAnyCases, {"--cases", ""}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--cases"), std::string::npos) << r.out;
}

TEST(Cli, SeedAndShardAreStrict) {
  for (const char* s : {"-1", "18446744073709551616", "1.5", "seven"}) {
    Exit r = touchstone(with(kLongSweep, {"--seed", s}));
    EXPECT_EQ(r.code, 2) << "--seed " << s << ": " << r.out;
    EXPECT_NE(r.out.find("0..18,446,744,073,709,551,615"), std::string::npos) << r.out;
  }
  for (const char* s : {"3/3", "0/0", "1", "-1/2", "0/2/3", "a/2", "0/2x", "0/1000001"}) {
    Exit r = touchstone(with(kLongSweep, {"--shard", s}));
    EXPECT_EQ(r.code, 2) << "--shard " << s << ": " << r.out;
    EXPECT_NE(r.out.find("--shard"), std::string::npos) << r.out;
  }
  Exit r = touchstone({"check", "--op", "rope_cis", "--backend", "vulkan", "--cases", "1", "--quiet", "--seed",
                      "18446744073709551615", "--shard", "1/2"});
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(Cli, UnknownOptionsAndArgumentsAreUsageErrors) {
  for (auto args : std::vector<std::vector<std::string>>{
           with(kLongSweep, {"--bogus"}),
           {"list", "--cases", "5"},          // an option of another command
           {"golden", "show", "-o", "x", "f.safetensors"},
           {"repro", "a/b/c/d/e", "extra"},
           {"frobnicate"},
           {"golden", "bogus"},
           with(kLongSweep, {"--quiet=false"})}) {
    Exit r = touchstone(args);
    EXPECT_EQ(r.code, 2) << args.back() << ": " << r.out;
    EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  }
}

TEST(Cli, DuplicatedOrEmptyValuesAreUsageErrors) {
  const std::string dir = temp_dir("dup");
  for (auto extra : std::vector<std::vector<std::string>>{{"--cases=5"},  // kLongSweep gave --cases already
                                                          {"--seed", "1", "--seed", "2"},
                                                          {"--junit", dir + "/a.xml", "--junit", dir + "/b.xml"},
                                                          {"--quiet", "--quiet"},
                                                          {"--backend", "vulkan"},  // kLongSweep named it
                                                          {"--op", "rope_cis"},
                                                          {"--dtype", "float32,float32"},
                                                          {"--dtype", "float32,"},
                                                          {"--junit", ""},
                                                          {"--device", ""}}) {
    Exit r = touchstone(with(kLongSweep, extra));
    EXPECT_EQ(r.code, 2) << extra[0] << " " << (extra.size() > 1 ? extra[1] : "") << ": " << r.out;
    EXPECT_EQ(r.out.find("case runs"), std::string::npos) << r.out;
  }
}

TEST(Cli, DtypesAreCheckedAgainstTheNamedOperators) {
  Exit r = touchstone({"check", "--op", "sdpa", "--dtype", "int32", "--cases", "10000000"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("sdpa"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("int32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float32"), std::string::npos) << "the allowed dtypes are named: " << r.out;
  r = touchstone({"check", "--dtype", "float99", "--cases", "10000000"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("float99"), std::string::npos) << r.out;
}

TEST(Cli, JunitDestinationIsCheckedBeforeTheSweep) {
  const std::string dir = temp_dir("dest");
  std::vector<std::string> bad = {"/nonexistent-dir/x.xml", dir, dir + "/missing/x.xml"};
  if (::geteuid() == 0) {
    bad.push_back("/proc/touchstone-junit.xml");  // root writes anywhere a file system lets it
  } else {
    fs::create_directories(dir + "/ro");
    fs::permissions(dir + "/ro", fs::perms::owner_read | fs::perms::owner_exec);
    bad.push_back(dir + "/ro/x.xml");
  }
  for (const std::string& path : bad) {
    Exit r = touchstone(with(kLongSweep, {"--junit", path}));
    EXPECT_EQ(r.code, 2) << path << ": " << r.out;
    EXPECT_NE(r.out.find(path), std::string::npos) << "the message names the destination: " << r.out;
    EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << "checked before anything opened: " << r.out;
  }
}

TEST(Cli, JunitToDevNullLeavesDevNullAlone) {
  struct stat before, after;
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  Exit r = touchstone({"check", "--op", "rope_cis", "--backend", "vulkan", "--cases", "1", "--quiet", "--junit", "/dev/null"});
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.out;  // written through or refused: both keep it
  ASSERT_EQ(::lstat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode)) << "/dev/null was replaced";
  EXPECT_EQ(before.st_rdev, after.st_rdev);
  EXPECT_EQ(before.st_ino, after.st_ino);
}

// A link can redirect a write to a file of its owner's choosing: outputs are never written through
// one (goldens/files.h check_output_path), and the link and its target stay as they were.
TEST(Cli, JunitThroughASymlinkIsRefusedAndBothStayAsTheyWere) {
  const std::string dir = temp_dir("link");
  fs::create_directories(dir + "/reports");
  { std::ofstream(dir + "/reports/real.xml") << "old"; }
  fs::create_symlink("reports/real.xml", dir + "/link.xml");
  Exit r = touchstone({"check", "--op", "rope_cis", "--backend", "vulkan", "--cases", "2", "--quiet", "--junit",
                      dir + "/link.xml"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("symbolic link"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.xml"));
  EXPECT_EQ(slurp(dir + "/reports/real.xml"), "old");
}

TEST(Cli, JunitIsWellFormedWhateverTheMessagesHold) {
  if (!have_python()) GTEST_SKIP() << "no python3 to parse the XML with";
  const std::string path = temp_dir("xml") + "/hostile.xml";
  JUnitReport report(path, [](const CaseResult& r) { return "touchstone repro '" + r.id + "' <&>"; });
  const size_t g = report.add_group("op/\xff\xfe/<dtype>");
  CaseResult r;
  r.backend = "vulkan";
  r.outcome = Outcome::fail;
  // Latin-1, a lone continuation byte, a truncated sequence, an overlong '/', a UTF-16 surrogate,
  // U+FFFE, control characters, XML specials and a CDATA terminator.
  r.id = std::string("caf\xe9/\x80/\xe2\x82/\xc0\xaf/\xed\xa0\x80/\xef\xbf\xbe/]]>");
  r.detail = std::string("bad \x01\x02\x1b[31m\x7f \"quoted\" 'single' <tag> & \x00 nul", 43) + "\r\n\tend \xf0\x9f\x98\x80";
  report.add(g, r);
  r.outcome = Outcome::unsupported;
  report.add(g, r);
  report.finish();
  std::string why;
  EXPECT_TRUE(python_parses_xml(path, &why)) << why << "\n" << slurp(path);
  const std::string xml = slurp(path);
  EXPECT_NE(xml.find("\xf0\x9f\x98\x80"), std::string::npos) << "valid UTF-8 is kept";
  EXPECT_NE(xml.find("&lt;tag&gt; &amp;"), std::string::npos);
}

// A sweep interrupted by `sig` once it is under way: exits 128 + sig with a partial report marked
// interrupted, and no trace of the earlier report. The sweep has ten million cases: this also shows
// cases run as they are made (building them first would not print progress before the bound).
void interrupt_sweep(int sig) {
  const std::string path = temp_dir(std::string("sig") + std::to_string(sig)) + "/report.xml";
  { std::ofstream(path) << "<testsuites><!-- STALE report of an earlier run --></testsuites>"; }
  bool sent = false, placeholder_seen = false;
  Exit r = touchstone(with(kLongSweep, {"--junit", path}), {}, [&](const std::string& out, pid_t pid) {
    if (sent || out.find("of 10000000 cases") == std::string::npos) return;
    // Running: the stale report is gone, replaced by one that says the run has not finished.
    const std::string now = slurp(path);
    placeholder_seen = now.find("INCOMPLETE") != std::string::npos && now.find("STALE") == std::string::npos;
    ::kill(pid, sig);
    sent = true;
  });
  ASSERT_TRUE(sent) << r.out;
  EXPECT_TRUE(placeholder_seen);
  EXPECT_EQ(r.code, 128 + sig) << r.out;
  EXPECT_NE(r.out.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"), std::string::npos) << r.out;
  const std::string xml = slurp(path);
  EXPECT_EQ(xml.find("STALE"), std::string::npos);
  EXPECT_NE(xml.find("type=\"INTERRUPTED\""), std::string::npos);
  EXPECT_NE(xml.find("<testcase classname=\"rope_cis/vulkan/float32\""), std::string::npos) << "cases ran";
  std::string why;
  if (have_python()) {
    EXPECT_TRUE(python_parses_xml(path, &why)) << why;
  }
  // No temporary file is left beside the report.
  size_t files = 0;
  for (auto& e : fs::directory_iterator(fs::path(path).parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST(Cli, SigintStopsTheSweepWithAPartialReport) { interrupt_sweep(SIGINT); }
TEST(Cli, SigtermStopsTheSweepWithAPartialReport) { interrupt_sweep(SIGTERM); }

// Without a Vulkan driver neither backend can run (Dawn runs on Vulkan here).
const std::vector<std::string> kNoDriver = {"VK_DRIVER_FILES=/nonexistent.json", "VK_ICD_FILENAMES=/nonexistent.json"};
const std::vector<std::string> kNoNode = {"TOUCHSTONE_NODE=/nonexistent/node"};

TEST(Cli, CheckThatRanNoBackendFails) {
  Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "1"}, with(kNoDriver, kNoNode));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no GPU backend"), std::string::npos) << r.out;
}

TEST(Cli, AnUnavailableDefaultBackendIsLoudAndANamedOneFails) {
  Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet"}, kNoNode);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("WARNING: backend webgpu was UNAVAILABLE.*none of its kernels were checked")))
      << r.out;
  r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet", "--backend", "vulkan,webgpu"}, kNoNode);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("webgpu is unavailable"), std::string::npos) << r.out;
  r = touchstone({"list", "--backend", "webgpu"}, kNoNode);
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(Cli, HelpIsGeneratedFromTheDefinitions) {
  Exit r = touchstone({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"check", "repro", "golden", "regen", "verify", "export", "show", "--cases N", "--junit FILE",
                        "--shard I/N", "--reference-only", "-o FILE", "CASE_ID", "exit codes", "outcomes"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = touchstone({"check", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("1..10,000,000"), std::string::npos) << r.out;
  EXPECT_EQ(touchstone({}).code, 2);
  EXPECT_EQ(touchstone({"help"}).code, 0);
}

// The examples in the help are taken from the registry: a case id that parses, a --match pattern
// that selects cases, built-in kernel stems. Help never names a case or a kernel that is gone.
TEST(Cli, HelpExamplesComeFromTheRegistry) {
  const std::string id = example_case_id();
  EXPECT_EQ(parse_case(id).id(), id);
  const Exit repro = touchstone({"repro", "--help"});
  EXPECT_NE(repro.out.find("e.g. " + id), std::string::npos) << repro.out;
  const std::string match = example_match();
  ASSERT_GE(match.size(), 2u);
  const std::string op = id.substr(0, id.find('/'));
  const Exit listed = touchstone({"check", "--op", op, "--cases", "20", "--list", "--match", match.substr(1, match.size() - 2)});
  EXPECT_EQ(listed.code, 0) << match << ": " << listed.out;
  EXPECT_NE(listed.out.find(id), std::string::npos) << "the example case itself matches: " << listed.out;
  std::stringstream stems(example_kernels());
  int n = 0;
  for (std::string stem; std::getline(stems >> std::ws, stem, ',');) {
    EXPECT_NO_THROW(KernelSources(".comp").get(stem)) << stem;
    ++n;
  }
  EXPECT_GE(n, 2) << example_kernels();
}

// ---- Selection, known-failure lists and reports (issue 14) ----

TEST(Cli, ListPrintsTheCaseIdsAndRunsNothing) {
  Exit all = touchstone({"check", "--op", "rope_cis", "--dtype", "float32,float16", "--cases", "7", "--list"},
                        with(kNoDriver, kNoNode));  // no backend is needed: none is opened
  ASSERT_EQ(all.code, 0) << all.out;
  std::vector<std::string> ids;
  std::istringstream lines(all.out);
  for (std::string l; std::getline(lines, l);) {
    EXPECT_EQ(l.rfind("rope_cis/", 0), 0u) << "only ids: " << l;
    ids.push_back(l);
  }
  EXPECT_EQ(ids.size(), 14u);
  // --shard and --match narrow the list exactly as they narrow the sweep.
  Exit part = touchstone({"check", "--op", "rope_cis", "--dtype", "float32,float16", "--cases", "7", "--list", "--shard", "1/3"});
  ASSERT_EQ(part.code, 0) << part.out;
  std::string want;
  for (size_t i = 1; i < ids.size(); i += 3) want += ids[i] + "\n";
  EXPECT_EQ(part.out, want);
  Exit matched = touchstone({"check", "--op", "rope_cis", "--dtype", "float32,float16", "--cases", "7", "--list", "--match", "/float16/"});
  ASSERT_EQ(matched.code, 0) << matched.out;
  want.clear();
  for (auto& id : ids)
    if (id.find("/float16/") != std::string::npos) want += id + "\n";
  EXPECT_EQ(matched.out, want);
  EXPECT_FALSE(want.empty());
  Exit r = touchstone({"check", "--op", "rope_cis", "--list", "--json", "/tmp/x.json"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--list runs nothing"), std::string::npos) << r.out;
}

TEST(Cli, MatchRunsOnlyTheMatchingCasesAndABadRegexIsAUsageError) {
  const std::string dir = temp_dir("match");
  Exit r = touchstone({"check", "--op", "rope_half", "--dtype", "float32", "--cases", "30", "--backend", "vulkan", "--quiet",
                       "--match", "D=(2|6),", "--json", dir + "/r.json"});
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string json = slurp(dir + "/r.json");
  std::regex id("\"id\":\"([^\"]+)\"");
  int n = 0;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), id); it != std::sregex_iterator(); ++it, ++n)
    EXPECT_TRUE(std::regex_search((*it)[1].str(), std::regex("D=(2|6),"))) << (*it)[1].str();
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 30);
  for (const char* bad : {"D=(2", "[", "*x"}) {
    Exit e = touchstone(with(kLongSweep, {"--match", bad}));
    EXPECT_EQ(e.code, 2) << bad << ": " << e.out;
    EXPECT_NE(e.out.find("--match"), std::string::npos) << e.out;
    EXPECT_EQ(e.out.find("backend vulkan"), std::string::npos) << "refused before anything opened: " << e.out;
  }
}

TEST(Cli, AKnownFailureListWithoutReasonsIsAUsageError) {
  const std::string dir = temp_dir("xfail");
  { std::ofstream(dir + "/no_reason.txt") << "# ok\nrope_cis/vulkan/float16   # fine\nsdpa/vulkan/float16\n"; }
  Exit r = touchstone(with(kLongSweep, {"--xfail", dir + "/no_reason.txt"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/no_reason.txt:3"), std::string::npos) << "names the file and line: " << r.out;
  EXPECT_NE(r.out.find("has no reason"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << "refused before anything opened: " << r.out;
  r = touchstone(with(kLongSweep, {"--xfail", dir + "/missing.txt"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("missing.txt"), std::string::npos) << r.out;
}

// --expect: a profile that does not load is a usage error before any backend opens; a backend
// lacking a capability the profile requires is a set-up error at open, naming it.
TEST(Cli, ADeviceProfileIsCheckedBeforeTheSweep) {
  const std::string dir = temp_dir("expect");
  Exit r = touchstone(with(kLongSweep, {"--expect", "no_such_device"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no such built-in profile (lavapipe, nvidia)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << "refused before anything opened: " << r.out;
  { std::ofstream(dir + "/metal.json") << R"({"profile": "x", "backends": {"metal": ["shader-f16"]}})"; }
  r = touchstone(with(kLongSweep, {"--expect", dir + "/metal.json"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("metal.json: unknown backend \"metal\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << "refused before anything opened: " << r.out;
  // With --no-int-dot the int8 kernels take their scalar path (they PASS), and the device lists
  // int8-dot-product=off: the profile's int8-dot-product is missing.
  r = touchstone(with(kLongSweep, {"--expect", "lavapipe", "--no-int-dot"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("lacks capability int8-dot-product, which device profile lavapipe"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cases  "), std::string::npos) << "no case ran: " << r.out;
}

// The device this suite runs on has what its committed profile says (else CI's check.sh fails at
// open), on every backend that runs here.
TEST(Cli, TheLavapipeProfileHoldsOnThisMachine) {
  TS_LAVAPIPE_ONLY("the profile names llvmpipe's subgroup size");
  Exit r = touchstone({"check", "--op", "rope_half", "--dtype", "float16", "--cases", "3", "--quiet", "--expect", "lavapipe"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("expect: device profile lavapipe (ci/profiles/lavapipe.json (built in))"), std::string::npos) << r.out;
}

// The gate end to end, on both backends: llvmpipe with 128-bit vectors (LP_NATIVE_VECTOR_WIDTH=128)
// shuffles in subgroups of 4, so sdpa's decode kernel (shuffle groups of 8) is UNSUPPORTED for
// "subgroups" on every decode case, while the device still offers subgroups. Without a profile the
// run stays green; held to a profile that requires subgroups, the same cases are
// UNEXPECTED_UNSUPPORTED and fail it. (lavapipe's own profile also names the subgroup size, so it
// refuses this device at open.)
TEST(Cli, AnUnsupportedCaseForACapabilityTheProfileRequiresFailsTheGate) {
  TS_LAVAPIPE_ONLY("LP_NATIVE_VECTOR_WIDTH narrows llvmpipe's subgroups");
  const std::string dir = temp_dir("unexpected");
  {
    std::ofstream(dir + "/subgroups.json")
        << R"({"profile": "subgroups", "backends": {"vulkan": ["subgroups"], "webgpu": ["subgroups"]}})";
  }
  const std::vector<std::string> narrow = {"LP_NATIVE_VECTOR_WIDTH=128"};
  // The six decode edge cases of impl=split: five with D % 8 == 0 take the decode kernel.
  const std::vector<std::string> sweep = {"check", "--op", "sdpa", "--dtype", "float32", "--backend", "vulkan,webgpu",
                                          "--cases", "40", "--quiet", "--match", "^sdpa/S=1,.*impl=split"};
  Exit plain = touchstone(with(sweep, {"--json", dir + "/plain.json"}), narrow);
  ASSERT_EQ(plain.code, 0) << plain.out;
  for (const char* backend : {"vulkan", "webgpu"})
    EXPECT_TRUE(std::regex_search(plain.out, std::regex(cat("sdpa/", backend, R"(/float32\s+6\s+1\s+0\s+0\s+5\s+0\s+0\s)"))))
        << "five UNSUPPORTED on " << backend << ": " << plain.out;
  EXPECT_NE(slurp(dir + "/plain.json").find(R"("capability":"subgroups")"), std::string::npos);

  Exit held = touchstone(with(sweep, {"--expect", dir + "/subgroups.json", "--json", dir + "/held.json", "--junit",
                                      dir + "/held.xml"}),
                         narrow);
  EXPECT_EQ(held.code, 1) << held.out;
  EXPECT_NE(held.out.find("unexp-unsup"), std::string::npos) << "the table's column: " << held.out;
  for (const char* backend : {"vulkan", "webgpu"})
    EXPECT_TRUE(std::regex_search(held.out, std::regex(cat("sdpa/", backend, R"(/float32\s+6\s+1\s+0\s+0\s+0\s+0\s+0\s+5\s)"))))
        << "the five counted UNEXPECTED_UNSUPPORTED on " << backend << ", none UNSUPPORTED: " << held.out;
  EXPECT_NE(held.out.find("UNEXPECTED_UNSUPPORTED touchstone repro 'sdpa/S=1,Hq=4,Hkv=1,D=8,pos=0,impl=split/float32/buffer/"
                          "seed=2228' --backend webgpu"),
            std::string::npos)
      << held.out;
  EXPECT_NE(held.out.find("    subgroups: sdpa: dispatch sdpa_decode_partial shuffles within groups of 8 invocations; "
                          "the device's subgroups are 4"),
            std::string::npos)
      << held.out;
  const std::string json = slurp(dir + "/held.json");
  EXPECT_NE(json.find(R"("status":"UNEXPECTED_UNSUPPORTED")"), std::string::npos);
  EXPECT_NE(json.find(R"("gate": "fail")"), std::string::npos);
  EXPECT_NE(slurp(dir + "/held.xml").find(R"(<failure type="UNEXPECTED_UNSUPPORTED")"), std::string::npos);
  if (have_python()) {
    const std::string cmd = std::string("python3 ") + TS_SOURCE_DIR + "/tests/report_check.py schema '" + dir +
                            "/held.json' " + TS_SOURCE_DIR + "/tools/report.schema.json";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  Exit lavapipe = touchstone(with(sweep, {"--expect", "lavapipe"}), narrow);
  EXPECT_EQ(lavapipe.code, 2) << lavapipe.out;
  EXPECT_NE(lavapipe.out.find("lacks capability subgroup-size=8, which device profile lavapipe"), std::string::npos)
      << lavapipe.out;
}

TEST(Cli, HelpDocumentsTheReportAndSelectionOptions) {
  Exit r = touchstone({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--json FILE", "--html FILE", "--xfail FILE", "--match REGEX", "--list", "--fail-fast", "merge",
                        "OUT", "INPUTS", "XPASS", "XFAIL", "touchstone-report/1"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = touchstone({"merge", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("no\\s+case\\s+twice"))) << r.out;  // wherever the help wraps
  EXPECT_EQ(touchstone({"merge", "out.json"}).code, 2) << "merge needs its inputs";
}

// A JSON report is a placeholder while the sweep runs and says so; interrupted, it says that, and
// its cases so far are there.
TEST(Cli, JsonReportIsNeverStaleAndAnInterruptedOneSaysSo) {
  const std::string path = temp_dir("jsonsig") + "/report.json";
  { std::ofstream(path) << "{\"STALE\": true}"; }
  bool sent = false;
  std::string during;
  Exit r = touchstone(with(kLongSweep, {"--json", path}), {}, [&](const std::string& out, pid_t pid) {
    if (sent || out.find("of 10000000 cases") == std::string::npos) return;
    during = slurp(path);
    ::kill(pid, SIGINT);
    sent = true;
  });
  ASSERT_TRUE(sent) << r.out;
  EXPECT_EQ(r.code, 130) << r.out;
  EXPECT_NE(during.find("\"state\": \"running\""), std::string::npos) << during;
  EXPECT_EQ(during.find("STALE"), std::string::npos) << during;
  const std::string json = slurp(path);
  EXPECT_NE(json.find("\"state\": \"interrupted\""), std::string::npos) << json.substr(0, 500);
  EXPECT_NE(json.find("\"stop_reason\": \"interrupted by SIGINT"), std::string::npos) << json.substr(0, 800);
  EXPECT_NE(json.find("\"id\":\"rope_cis/"), std::string::npos) << "cases ran";
}

// The live progress line is for a terminal: a pty sees it redrawn in place; a pipe never does.
TEST(Cli, TheProgressLineIsDrawnOnATerminalOnly) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<std::string> words = {std::string(TS_BINARY_DIR) + "/touchstone"};
    words.insert(words.end(), kLongSweep.begin(), kLongSweep.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string out;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool sent = false;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO once the child is gone
      out.append(buf, size_t(n));
    }
    if (!sent && std::regex_search(out, std::regex("\r\x1b\\[K  [0-9]+ of [0-9]+ cases \\([0-9.]+%\\)  [0-9]+ cases/s  ETA [0-9:-]+  0 failing"))) {
      ::kill(pid, SIGINT);
      sent = true;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(sent) << "no progress line on the terminal: " << out.substr(0, 2000);
  EXPECT_EQ(out.find("of 10000000 cases..."), std::string::npos) << "a terminal gets the live line, not the log lines";
  // Through a pipe: the plain log lines only.
  bool seen = false;
  Exit r = touchstone(kLongSweep, {}, [&](const std::string& o, pid_t child) {
    if (!seen && o.find("of 10000000 cases...") != std::string::npos) {
      seen = true;
      ::kill(child, SIGINT);
    }
  });
  EXPECT_TRUE(seen) << r.out;
  EXPECT_EQ(r.out.find("ETA"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
}

// ---- Your own kernels (--kernels DIR), their ABI ----

// A copy of a built-in kernel with one line changed, in its own directory.
std::string kernel_dir(const std::string& name, const std::string& file, const std::string& from, const std::string& to) {
  const std::string dir = temp_dir(name);
  std::string text = slurp(std::string(TS_SOURCE_DIR) + "/gpu/" + (file.ends_with(".comp") ? "vulkan" : "webgpu") + "/shaders/" + file);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  std::ofstream(dir + "/" + file) << text;
  return dir;
}

TEST(Cli, KernelsDirReplacesTheKernelInCheckReproAndGoldenVerify) {
  const std::string dir = kernel_dir("kernels_broken", "rope_half.comp", "-x_at(i + hd)", "x_at(i + hd)");
  const std::string golden = std::string(TS_SOURCE_DIR) + "/goldens/rope_half-float32-pass-2.safetensors";
  Exit ok = touchstone({"golden", "verify", golden, "--backend", "vulkan"});
  EXPECT_EQ(ok.code, 0) << ok.out;
  Exit g = touchstone({"golden", "verify", golden, "--backend", "vulkan", "--kernels", dir});
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_NE(g.out.find("kernels: " + dir + " (rope_half.comp)"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("Your kernels (--kernels; cases that ran each): " + dir + "/rope_half.comp 1"), std::string::npos) << g.out;

  const std::string id = "rope_half/B=1,H=2,S=3,D=10,pos=7,tables=random/float32/buffer/seed=4";
  Exit r = touchstone({"repro", id, "--backend", "vulkan"}, {"TOUCHSTONE_KERNELS=" + dir});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("[vulkan] FAIL"), std::string::npos) << r.out;
  EXPECT_EQ(touchstone({"repro", id, "--backend", "vulkan"}).code, 0);

  const std::string json = dir + "/../kernels_report_" + std::to_string(::getpid()) + ".json";
  Exit c = touchstone({"check", "--op", "rope_half", "--dtype", "float32", "--cases", "6", "--backend", "vulkan", "--quiet",
                       "--kernels", dir, "--json", json});
  EXPECT_EQ(c.code, 1) << c.out;
  EXPECT_NE(c.out.find("--backend vulkan --kernels '" + dir + "'"), std::string::npos) << "repro lines name DIR: " << c.out;
  EXPECT_NE(c.out.find("Your kernels (--kernels; cases that ran each): " + dir + "/rope_half.comp "), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("ran in no case"), std::string::npos) << c.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json), nullptr, false);
  ASSERT_TRUE(j.is_object()) << slurp(json);
  EXPECT_EQ(j["kernels"]["dir"], dir);
  EXPECT_EQ(j["kernels"]["files"][0]["file"], dir + "/rope_half.comp");
  EXPECT_EQ(j["kernels"]["files"][0]["backend"], "vulkan");
  bool failing_repro = false;
  for (const auto& k : j["cases"])
    if (k.contains("repro")) failing_repro |= k["repro"].get<std::string>().find("--kernels '" + dir + "'") != std::string::npos;
  EXPECT_TRUE(failing_repro) << "the cases' repro lines name DIR";
  if (have_python()) {
    const std::string cmd = std::string(::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3 " : "python3 ") + TS_SOURCE_DIR + "/tests/report_check.py schema '" + json + "' " +
                            TS_SOURCE_DIR + "/tools/report.schema.json > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "schema: " << json;
  }
  fs::remove(json);
}

// A file of --kernels that no case ran was checked by nothing: the run says so, on stdout and stderr,
// beside a table of PASSes that are not its verdict.
TEST(Cli, AKernelThatNoCaseRanIsNamed) {
  const std::string dir = kernel_dir("kernels_unrun", "rope_half.comp", "void main()", "void main()");
  Exit r = touchstone({"check", "--op", "rope_llama", "--dtype", "float32", "--cases", "4", "--backend", "vulkan", "--quiet",
                       "--kernels", dir});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Your kernels (--kernels; cases that ran each): " + dir + "/rope_half.comp 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("WARNING: your kernel " + dir + "/rope_half.comp ran in no case"), std::string::npos) << r.out;
  // golden verify the same: a rope_llama golden runs no rope_half kernel.
  const std::string golden = std::string(TS_SOURCE_DIR) + "/goldens/rope_llama-float32-pass-1.safetensors";
  Exit g = touchstone({"golden", "verify", golden, "--backend", "vulkan", "--kernels", dir});
  EXPECT_EQ(g.code, 0) << g.out;
  EXPECT_NE(g.out.find("WARNING: your kernel " + dir + "/rope_half.comp ran in no case"), std::string::npos) << g.out;
  fs::remove_all(dir);
}

TEST(Cli, AKernelsDirWithAStrangerOrNothingIsAUsageError) {
  const std::string dir = kernel_dir("kernels_stranger", "rope_half.wgsl", "let hd", "let hd");
  std::ofstream(dir + "/rope_halve.comp") << "void main() {}\n";
  Exit r = touchstone(with(kAnyCases, {"--kernels", dir}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/rope_halve.comp names no built-in kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sdpa_qk_tiled"), std::string::npos) << "the kernels are listed: " << r.out;
  EXPECT_EQ(r.out.find("backend "), std::string::npos) << "no backend opened: " << r.out;
  fs::remove(dir + "/rope_halve.comp");
  std::ofstream(dir + "/notes.txt") << "x\n";
  EXPECT_EQ(touchstone(with(kAnyCases, {"--kernels", dir})).code, 2);
  fs::remove_all(dir);
  fs::create_directories(dir);
  r = touchstone(with(kAnyCases, {"--kernels", dir}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds no kernel"), std::string::npos) << r.out;
  EXPECT_EQ(touchstone(with(kAnyCases, {"--kernels", dir + "/missing"})).code, 2);
  EXPECT_EQ(touchstone(kAnyCases, {"TOUCHSTONE_KERNELS=" + dir + "/missing"}).code, 2);
}

TEST(Cli, AbiDerivesTheInterfaceFromThePlan) {
  Exit r = touchstone({"abi", "rope_half"});
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"dispatch 1: kernel rope_half", ".comp binding 0  TS_INPUT(x, 0)", ".wgsl binding 3  TS_OUTPUT(out_, 3)",
                        "uniform `pc : Params`", "#define DTYPE float", "alias DTYPE = f32;", "fn ts_linear_id(", "gpu/ACCESSORS.md"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  // The sample is a real valid case, and the uniforms shown are its plan's: n = out's texels.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("sample case[^\n]*\n +(rope_half/\\S+)"))) << r.out;
  EXPECT_EQ(touchstone({"repro", m[1].str(), "--backend", "vulkan"}).code, 0) << m[1];
  r = touchstone({"abi", "sdpa", "--dtype", "float16"});
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"variant 1 of ", "variant 2 of ", "sdpa_qk_naive", "sdpa_qk_tiled", "SKIP_MASKED_TILES=1",
                        "scratch float32", "#define DTYPE float16_t", "enable f16;",
                        // the coopmat prefill from position 0: the flash kernel reads k and v, the update beside it
                        "remapped by the plan: k_cache -> tensor k, v_cache -> tensor v",
                        "dispatch 2: kernel sdpa_update_cache  (replaced by DIR/sdpa_update_cache.comp, "
                        "DIR/sdpa_update_cache.wgsl)\n    runs beside dispatch 1"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = touchstone({"abi", "q8ta_linear"});
  EXPECT_NE(r.out.find("workgroup: exactly 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("q8ta_requant.glsl"), std::string::npos) << "the includes a kernel may use: " << r.out;
  EXPECT_EQ(touchstone({"abi", "nope"}).code, 2);
  EXPECT_EQ(touchstone({"abi", "rope_half", "--dtype", "int8"}).code, 2);
}

TEST(Cli, DeviceSelectsAVulkanDeviceByIndexOrNameAndListShowsTheChoices) {
  Exit l = touchstone({"list", "--backend", "vulkan"});
  ASSERT_EQ(l.code, 0) << l.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(l.out, m, std::regex("devices \\(--device INDEX or a name substring\\):\n +0: ([^\\[]+) \\[")))
      << l.out;
  const std::string name = m[1];  // "llvmpipe (LLVM 15.0.6, 256 bits)"
  const std::string part = name.substr(0, name.find(' '));
  std::string upper = part;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& sel : {std::string("0"), part, upper}) {
    Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet", "--backend", "vulkan", "--device", sel});
    EXPECT_EQ(r.code, 0) << sel << ": " << r.out;
    EXPECT_NE(r.out.find("backend vulkan  " + name), std::string::npos) << r.out;
  }
  Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet", "--backend", "vulkan", "--device", "no-such-gpu"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no-such-gpu"), std::string::npos) << r.out;
}

// WebGPU runs Dawn's adapter of the Vulkan device --device names: Dawn is asked for it by name
// (its flags, which `list` shows), and a selector matching nothing is an error for that backend.
TEST(Cli, DeviceSelectsTheDawnAdapterOfTheSameDevice) {
  Exit l = touchstone({"list", "--backend", "webgpu"});
  if (l.code != 0) GTEST_SKIP() << "webgpu cannot run here (cli_expected_backends_available decides whether it must): " << l.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(l.out, m, std::regex("Dawn's Vulkan adapter of that device\\):\n +0: ([^\\[]+) \\[")))
      << l.out;
  const std::string name = m[1];
  EXPECT_EQ(l.out.find("adapter="), std::string::npos) << "no --device: Dawn's own default\n" << l.out;
  const std::string part = name.substr(0, name.find(' '));
  std::string upper = part;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& sel : {std::string("0"), upper}) {
    Exit s = touchstone({"list", "--backend", "webgpu", "--device", sel});
    EXPECT_EQ(s.code, 0) << sel << ": " << s.out;
    EXPECT_NE(s.out.find("adapter=" + name), std::string::npos) << sel << ": " << s.out;
    Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet", "--backend", "webgpu", "--device", sel});
    EXPECT_EQ(r.code, 0) << sel << ": " << r.out;
    EXPECT_NE(r.out.find("rope_cis/webgpu/float32"), std::string::npos) << r.out;
  }
  for (const std::string& sel : {std::string("no-such-gpu"), std::string("99")}) {
    Exit r = touchstone({"check", "--op", "rope_cis", "--cases", "2", "--quiet", "--backend", "webgpu", "--device", sel});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("backend webgpu  UNAVAILABLE: --device '" + sel + "'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0: " + name), std::string::npos) << "the devices found are listed: " << r.out;
  }
}

TEST(Cli, HelpDocumentsKernelsAbiAndDevice) {
  Exit r = touchstone({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--kernels DIR", "TOUCHSTONE_KERNELS", "abi", "--device SEL", "Dawn"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  for (const char* cmd : {"check", "repro"}) {
    r = touchstone({cmd, "--help"});
    EXPECT_NE(r.out.find("--kernels DIR"), std::string::npos) << cmd << ": " << r.out;
  }
  r = touchstone({"golden", "verify", "--help"});
  EXPECT_NE(r.out.find("--kernels DIR"), std::string::npos) << r.out;
  r = touchstone({"bench", "--help"});
  EXPECT_NE(r.out.find("--kernels DIR"), std::string::npos) << r.out;
}

// bench on a tiny case on both backends: the report's structure only (every field there, numbers
// positive and finite, every implementation the operator declares judged PASS and timed), timed in
// streams of 2 chains (--stream), which the report records. The times themselves are never asserted.
TEST(Cli, BenchJudgesAndTimesEveryImplementationOnBothBackends) {
  const fs::path out = fs::temp_directory_path() / ("ts_bench_" + std::to_string(::getpid()) + ".json");
  const Exit r = touchstone({"bench", "sdpa/S=2,Hq=4,Hkv=2,D=8,pos=3/float32/buffer/seed=1", "--backend", "vulkan,webgpu",
                             "--time-ms", "1", "--reps", "3", "--warmup", "1", "--stream", "2", "--json", out.string()});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("timing: 2 dispatch chains back to back"), std::string::npos) << r.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  fs::remove(out);
  EXPECT_EQ(j.at("schema"), "touchstone-bench/1");
  EXPECT_EQ(j.at("gate"), "pass");
  EXPECT_EQ(j.at("budget").at("stream"), 2);
  auto positive = [](const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0; };
  ASSERT_EQ(j.at("copy").size(), 2u);
  for (const auto& c : j.at("copy")) {
    EXPECT_TRUE(positive(c.at("median_us")) && positive(c.at("min_us")) && positive(c.at("gbps"))) << c;
    EXPECT_TRUE(positive(c.at("floor_us"))) << c;
    EXPECT_GE(c.at("reps").get<int>(), 1) << c;
  }
  size_t impls = 0;
  for (const Var& v : find_op("sdpa")->vars)
    if (v.name == "impl") impls = size_t(std::count_if(v.words.begin(), v.words.end(), [](auto& w) { return w != "auto"; }));
  ASSERT_EQ(j.at("cases").size(), 2 * impls) << j.at("cases");
  for (const auto& c : j.at("cases")) {
    // impl=coopmat takes float16 only: this float32 case breaks its rule, on every backend alike.
    if (c.at("impl") == "coopmat") {
      EXPECT_EQ(c.at("verdict"), "REJECTED") << c;
      continue;
    }
    EXPECT_EQ(c.at("verdict"), "PASS") << c;
    EXPECT_TRUE(c.at("timed").get<bool>()) << c;
    for (const char* k : {"median_us", "min_us", "bytes", "gbps", "pct_of_copy", "ops", "gops", "speedup"})
      EXPECT_TRUE(positive(c.at(k))) << k << ": " << c;
    EXPECT_LE(c.at("min_us").get<double>(), c.at("median_us").get<double>()) << c;
    EXPECT_EQ(c.at("ops_unit"), "GFLOP/s") << c;
    for (const char* k : {"workload", "id", "op", "impl", "backend", "dtype"}) EXPECT_TRUE(c.at(k).is_string()) << k << ": " << c;
    // Present where the device offers them (NVIDIA), empty elsewhere: each names a kernel of the plan.
    ASSERT_TRUE(c.at("kernel_statistics").is_array()) << c;
    for (const auto& k : c.at("kernel_statistics")) {
      EXPECT_NE(c.at("id").get<std::string>().find("sdpa"), std::string::npos);
      EXPECT_EQ(k.at("kernel").get<std::string>().rfind("sdpa_", 0), 0u) << k;
      EXPECT_FALSE(k.at("statistics").empty()) << k;
    }
  }
  // --kernel-stats says, per timed case, what it has or why it has none.
  const Exit stats = touchstone({"bench", "rope_cis/B=1,N=3,C=8/float32/buffer/seed=1", "--backend", "vulkan",
                                 "--time-ms", "1", "--reps", "2", "--kernel-stats"});
  EXPECT_EQ(stats.code, 0) << stats.out;
  EXPECT_TRUE(stats.out.find("    rope_cis: ") != std::string::npos ||
              stats.out.find("kernel statistics: none (") != std::string::npos) << stats.out;
  // --cold: every interval after the device overwrote up to 256 MiB elsewhere, on both backends;
  // the report says so and what each backend overwrote, the case is still judged and timed, and the
  // overwrite is no kernel of the case.
  const fs::path cold_json = fs::temp_directory_path() / ("ts_bench_cold_" + std::to_string(::getpid()) + ".json");
  const Exit cold = touchstone({"bench", "rope_cis/B=1,N=3,C=8/float32/buffer/seed=1", "--backend", "vulkan,webgpu",
                                "--time-ms", "1", "--reps", "2", "--warmup", "1", "--cold", "--json", cold_json.string()});
  ASSERT_EQ(cold.code, 0) << cold.out;
  EXPECT_NE(cold.out.find("overwrites up to 256 MiB elsewhere (--cold)"), std::string::npos) << cold.out;
  EXPECT_NE(cold.out.find(" MiB overwritten before each interval"), std::string::npos) << cold.out;
  std::ifstream cold_in(cold_json);
  const nlohmann::json cj = nlohmann::json::parse(cold_in);
  fs::remove(cold_json);
  EXPECT_EQ(cj.at("budget").at("cold_bytes"), 256u << 20);
  ASSERT_EQ(cj.at("copy").size(), 2u) << cj.at("copy");
  for (const auto& c : cj.at("copy")) {
    const uint64_t written = c.at("cold_bytes");
    EXPECT_GT(written, 0u) << c;
    EXPECT_LE(written, 256u << 20) << c;
    EXPECT_EQ(written % 16, 0u) << c;
  }
  for (const auto& c : cj.at("cases")) {
    EXPECT_TRUE(c.at("timed").get<bool>()) << c;
    for (const auto& k : c.at("kernel_statistics")) EXPECT_EQ(k.at("kernel"), "rope_cis") << k;
  }
  EXPECT_EQ(j.at("budget").at("cold_bytes"), 0) << "without --cold, repetitions follow each other";
  for (const auto& c : j.at("copy")) EXPECT_EQ(c.at("cold_bytes"), 0) << c;
  // --primed: every interval opens with the primer, whose own median (timed alone) the report gives
  // per row and per copy ceiling; the case is still judged and timed. The case is large enough that
  // its chain stands well clear of lavapipe's timer noise past the primer.
  const fs::path primed_json = fs::temp_directory_path() / ("ts_bench_primed_" + std::to_string(::getpid()) + ".json");
  const Exit primed = touchstone({"bench", "rope_cis/B=1,N=64,C=4096/float32/buffer/seed=1", "--backend", "vulkan,webgpu",
                                  "--time-ms", "1", "--reps", "3", "--warmup", "1", "--primed", "--json", primed_json.string()});
  ASSERT_EQ(primed.code, 0) << primed.out;
  EXPECT_NE(primed.out.find("taken off (--primed)"), std::string::npos) << primed.out;
  std::ifstream primed_in(primed_json);
  const nlohmann::json pj = nlohmann::json::parse(primed_in);
  fs::remove(primed_json);
  EXPECT_EQ(pj.at("budget").at("primed"), true);
  for (const auto& c : pj.at("copy")) EXPECT_TRUE(positive(c.at("primer_us"))) << c;
  ASSERT_EQ(pj.at("cases").size(), 2u) << pj.at("cases");
  for (const auto& c : pj.at("cases")) {
    EXPECT_TRUE(c.at("timed").get<bool>()) << c;
    EXPECT_TRUE(positive(c.at("primer_us")) && positive(c.at("median_us")) && positive(c.at("min_us"))) << c;
  }
  EXPECT_EQ(j.at("budget").at("primed"), false);
  for (const auto& c : j.at("cases")) EXPECT_TRUE(c.at("primer_us").is_null()) << c;
  // A primed interval holds one chain: with a stream it is a usage error before any backend opens.
  const Exit both = touchstone({"bench", "rope_cis/B=1,N=3,C=8/float32/buffer/seed=1", "--primed", "--stream", "2"});
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_NE(both.out.find("--primed"), std::string::npos) << both.out;
  EXPECT_EQ(both.out.find("backend vulkan"), std::string::npos) << both.out;
  // A stream of no chains, or of more than 64, is a usage error before any backend opens.
  for (const char* n : {"0", "65", "x"}) {
    const Exit s = touchstone({"bench", "rope_cis/B=1,N=3,C=8/float32/buffer/seed=1", "--stream", n});
    EXPECT_EQ(s.code, 2) << n << ": " << s.out;
    EXPECT_NE(s.out.find("--stream"), std::string::npos) << s.out;
    EXPECT_EQ(s.out.find("backend vulkan"), std::string::npos) << s.out;
  }
  // A foreign backend runs a library's kernels outside bench's timed chains: naming one is a usage
  // error before any backend opens, never a run that times nothing and exits 0.
  for (const char* b : {"ggml-vulkan", "ort-webgpu", "vulkan,ort-webgpu"}) {
    const Exit f = touchstone({"bench", "rope_cis/B=1,N=3,C=8/float32/buffer/seed=1", "--backend", b});
    EXPECT_EQ(f.code, 2) << b << ": " << f.out;
    EXPECT_NE(f.out.find("bench times Touchstone's kernels"), std::string::npos) << f.out;
    EXPECT_NE(f.out.find("name vulkan or webgpu"), std::string::npos) << f.out;
    EXPECT_EQ(f.out.find("backend vulkan"), std::string::npos) << f.out;
  }
  // A case the contract rejects is shown as such, untimed, and does not fail the run.
  const Exit bad = touchstone({"bench", "q8ta_linear/M=2,K=8,N=4,impl=gemv/int8/buffer/seed=1", "--backend", "vulkan",
                               "--time-ms", "1", "--reps", "2"});
  EXPECT_EQ(bad.code, 0) << bad.out;
  EXPECT_NE(bad.out.find("REJECTED"), std::string::npos) << bad.out;
}


// A command run by bash, for the limits only a shell sets (ulimit) and for pasting printed lines.
Exit bash(const std::string& script, const std::vector<std::string>& env = {}) {
  return spawn({"/bin/bash", "-c", script}, env);
}

// `--junit /dev/full` (or a full disk) must not end with exit 0 and no report. A device is
// refused before the run; a report that cannot be written whole (here a file-size limit, EFBIG)
// fails the run with exit 2 naming the report and the reason, leaves no temporary behind, and
// leaves JUnit's and JSON's INCOMPLETE placeholder, never a report that looks current.
TEST(Cli, AReportThatCannotBeWrittenWhollyFailsTheRun) {
  const Exit full = touchstone(with(kAnyCases, {"--cases", "1", "--junit", "/dev/full"}));
  EXPECT_EQ(full.code, 2) << full.out;
  EXPECT_NE(full.out.find("/dev/full"), std::string::npos) << full.out;
  EXPECT_EQ(full.out.find("backend vulkan"), std::string::npos) << "refused before anything opened: " << full.out;
  // Under a file-size limit lavapipe's device memory (memfd) raises SIGBUS, so the limit is set on
  // merge, which writes the same way as check and opens no device (tests/test_report_files.cpp
  // covers check's reports under the limit in-process).
  const std::string dir = temp_dir("efbig");
  const Exit shard = touchstone(with(kAnyCases, {"--cases", "60", "--quiet", "--json", dir + "/s.json"}));
  ASSERT_EQ(shard.code, 0) << shard.out;
  const std::string path = dir + "/merged.json";
  // 4 KiB: not room for 60 cases. SIGXFSZ is not ignored here: touchstone must ignore it itself, or
  // the limit kills it without a word.
  const Exit r = bash("ulimit -f 4; exec \"$TS\" merge \"$D/merged.json\" \"$D/s.json\"",
                      {"TS=" + std::string(TS_BINARY_DIR) + "/touchstone", "D=" + dir});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot write"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(path + ": File too large"), std::string::npos) << "naming the report and the reason: " << r.out;
  EXPECT_FALSE(fs::exists(path));
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "s.json") << "left behind: " << e.path();
}

// Two outputs naming one file overwrote each other, and --json naming the --xfail list destroyed
// it: both are usage errors before anything opens, by inode where the file exists and by
// normalised path where it does not.
TEST(Cli, OutputsNamingOneFileOrAnInputAreUsageErrors) {
  const std::string dir = temp_dir("same");
  { std::ofstream(dir + "/known.txt") << "# nothing known\n"; }
  fs::create_symlink("known.txt", dir + "/alias.txt");
  const std::vector<std::vector<std::string>> bad = {
      {"--json", dir + "/x", "--junit", dir + "/x"},
      {"--json", dir + "/x", "--html", dir + "/sub/../x"},
      {"--junit", dir + "/./y", "--html", dir + "/y"},
      {"--xfail", dir + "/known.txt", "--json", dir + "/known.txt"},
      {"--xfail", dir + "/alias.txt", "--junit", dir + "/known.txt"},
  };
  fs::create_directories(dir + "/sub");
  for (const auto& extra : bad) {
    const Exit r = touchstone(with(kAnyCases, with({"--cases", "1"}, extra)));
    EXPECT_EQ(r.code, 2) << extra[1] << ": " << r.out;
    EXPECT_NE(r.out.find("name the same file"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << r.out;
  }
  EXPECT_EQ(slurp(dir + "/known.txt"), "# nothing known\n");
  const Exit merge = touchstone({"merge", dir + "/known.txt", dir + "/alias.txt"});
  EXPECT_EQ(merge.code, 2) << merge.out;
  EXPECT_NE(merge.out.find("would destroy that input"), std::string::npos) << merge.out;
  EXPECT_EQ(slurp(dir + "/known.txt"), "# nothing known\n");
}

TEST(Cli, AnXfailPatternNoGroupOfTheRunFitsIsAUsageError) {
  const std::string dir = temp_dir("xfail_reach");
  { std::ofstream(dir + "/known.txt") << "rope_cis/vulkan/*  # fine\nsdpa/*/float16  # not in this run\n"; }
  const Exit r = touchstone(with(kAnyCases, {"--cases", "1", "--xfail", dir + "/known.txt"}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/known.txt:2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sdpa/*/float16 matches no group"), std::string::npos) << r.out;
  { std::ofstream(dir + "/known.txt") << "*/webgpu/*  # webgpu only\n"; }
  EXPECT_EQ(touchstone(with(kAnyCases, {"--cases", "1", "--xfail", dir + "/known.txt"})).code, 2);
  { std::ofstream(dir + "/known.txt") << "rope_cis/*/float32  # fine\n"; }
  const Exit ok = touchstone(with(kAnyCases, {"--cases", "1", "--quiet", "--xfail", dir + "/known.txt"}));
  EXPECT_NE(ok.code, 2) << ok.out;
}

// std::regex crashed on 30,000 nested groups and backtracked for minutes on (a+)+$: --match takes
// core/linear_regex.h, with limits named in the message; one that selects nothing is a usage error.
TEST(Cli, MatchIsBoundedAndMustSelectACase) {
  const std::string deep = std::string(30000, '(') + "a" + std::string(30000, ')');
  for (const std::vector<std::string>& cmd : {kAnyCases, std::vector<std::string>{"bench", "--backend", "vulkan"}}) {
    const Exit crash = touchstone(with(cmd, {"--match", deep}));
    EXPECT_EQ(crash.code, 2) << crash.out.substr(0, 500);
    EXPECT_NE(crash.out.find("more than the limit of 1000"), std::string::npos) << crash.out.substr(0, 500);
    const Exit none = touchstone(with(cmd, {"--match", "(a+)+$"}));
    EXPECT_EQ(none.code, 2) << none.out;
    EXPECT_NE(none.out.find("select"), std::string::npos) << none.out;
    EXPECT_EQ(none.out.find("backend vulkan"), std::string::npos) << none.out;
  }
  const Exit nested = touchstone(with(kAnyCases, {"--match", std::string(33, '(') + "a" + std::string(33, ')')}));
  EXPECT_NE(nested.out.find("deeper than the limit of 32"), std::string::npos) << nested.out;
  const Exit listed = touchstone({"check", "--op", "rope_cis", "--cases", "30", "--match", "^(sdpa|rope_cis)/.*seed=[0-9]+$", "--list"});
  EXPECT_EQ(listed.code, 0) << listed.out;
  EXPECT_EQ(listed.out, touchstone({"check", "--op", "rope_cis", "--cases", "30", "--list"}).out);
}

// TOUCHSTONE_VALIDATION=yes meant "off" and TOUCHSTONE_CORES=1024 aborted under a memory limit:
// every TOUCHSTONE_* variable takes a stated set of values and refuses the rest, naming it.
TEST(Cli, EnvironmentVariablesAreStrict) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"TOUCHSTONE_VALIDATION=yes", "0 (off) or 1 (on)"}, {"TOUCHSTONE_VALIDATION=", "set but empty"},
      {"TOUCHSTONE_PROFILE=true", "0 (off) or 1 (on)"},   {"TOUCHSTONE_WORKER_PROFILE=", "set but empty"},
      {"TOUCHSTONE_CORES=1024", "1..512"},                {"TOUCHSTONE_CORES=+4", "1..512"},
      {"TOUCHSTONE_CORES= 4", "1..512"},                  {"TOUCHSTONE_CORES=0", "1..512"},
      {"TOUCHSTONE_KERNELS=", "set but empty"},           {"TOUCHSTONE_NODE=", "set but empty"},
  };
  for (const auto& [env, says] : bad) {
    const Exit r = touchstone(with(kAnyCases, {"--cases", "1"}), {env});
    EXPECT_EQ(r.code, 2) << env << ": " << r.out;
    EXPECT_NE(r.out.find(env.substr(0, env.find('='))), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("backend vulkan"), std::string::npos) << r.out;
  }
  EXPECT_EQ(touchstone({"check", "--op", "rope_cis", "--cases", "1", "--list"}, {"TOUCHSTONE_CORES=512"}).code, 0);
}

// 512 planned cores under a memory limit: the threads that cannot be made are an error message
// and exit 2, never `terminate called without an active exception`.
TEST(Cli, ThreadsThatCannotBeMadeAreAnErrorNotAnAbort) {
#ifdef TS_SANITIZED
  // ASan reserves terabytes of shadow memory at start, which no `ulimit -v` admits: the release
  // pass of ci/test.sh runs this.
  GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v";
#endif
  const Exit r = bash("ulimit -s 65536; ulimit -v 4000000; exec \"$TS\" check --op rope_cis --backend vulkan --cases 1 --quiet",
                      {"TS=" + std::string(TS_BINARY_DIR) + "/touchstone", "TOUCHSTONE_CORES=512"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot start thread"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
}

// A repro line pasted into bash runs exactly the command it shows: a kernel directory named
// x'$(touch PWNED)'y is one argument, and nothing in it runs.
TEST(Cli, PrintedReproLinesPasteAsTheExactCommand) {
  const std::string dir = temp_dir("quote");
  const std::string kernels = dir + "/x'$(touch PWNED)'y";
  fs::create_directories(kernels);
  fs::copy_file(std::string(TS_SOURCE_DIR) + "/gpu/vulkan/shaders/rope_half.comp", kernels + "/rope_half.comp");
  {  // rotate_half without its minus signs: every case fails
    std::string src = slurp(kernels + "/rope_half.comp");
    for (size_t at; (at = src.find("-x_at")) != std::string::npos;) src.erase(at, 1);
    std::ofstream(kernels + "/rope_half.comp") << src;
  }
  const Exit r = touchstone({"check", "--op", "rope_half", "--dtype", "float32", "--backend", "vulkan", "--cases", "20",
                             "--quiet", "--kernels", kernels, "--json", dir + "/run.json"});
  ASSERT_EQ(r.code, 1) << r.out;
  std::vector<std::string> lines;
  for (size_t at = 0; (at = r.out.find("touchstone repro ", at)) != std::string::npos; ++at)
    lines.push_back(r.out.substr(at, r.out.find('\n', at) - at));
  const auto report = nlohmann::json::parse(slurp(dir + "/run.json"));
  for (const auto& c : report.at("cases"))
    if (c.contains("repro")) lines.push_back(c.at("repro"));
  ASSERT_GE(lines.size(), 2u) << r.out;
  for (const std::string& line : lines) {
    // `touchstone` as a shell function that writes its argv, one argument a line.
    const Exit pasted = bash("cd \"$D\" && touchstone() { printf '%s\\n' \"$@\" > argv; }\n" + line,
                             {"D=" + dir});
    EXPECT_EQ(pasted.code, 0) << line << ": " << pasted.out;
    EXPECT_FALSE(fs::exists(dir + "/PWNED")) << line;
    const std::string argv = slurp(dir + "/argv");
    EXPECT_NE(argv.find("\n--kernels\n" + kernels + "\n"), std::string::npos) << line << "\n" << argv;
    EXPECT_EQ(argv.rfind("repro\nrope_half/", 0), 0u) << argv;
  }
}

}  // namespace
}  // namespace ts
