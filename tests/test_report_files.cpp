// tools/report_file.h, tools/shell_quote.h, tools/xfail.h as the run's end meets them: a report
// path swapped during the run is refused, not written through or waited on; quoted words come
// back from the shell byte for byte; a long known-failure list loads in linear time.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "tools/junit.h"
#include "tools/report_json.h"
#include "tools/shell_quote.h"
#include "tools/xfail.h"
#include "tests/test_files.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) { return test::fresh_dir("files", name); }
using test::slurp;

const nlohmann::json kHead = {{"schema", kReportSchema}, {"state", "complete"}, {"seconds", 1}};

// The path is checked before the run, but the run takes minutes: a link put there meanwhile must
// not redirect the report into its target, and the link stays.
TEST(ReportFiles, APathSwappedForALinkDuringTheRunIsRefused) {
  const std::string dir = temp_dir("swap_link");
  { std::ofstream(dir + "/victim") << "keep me"; }
  JsonReport report(dir + "/r.json");
  report.mark_started("test");
  fs::remove(dir + "/r.json");
  fs::create_symlink("victim", dir + "/r.json");
  EXPECT_THROW(report.finish(kHead), std::runtime_error);
  EXPECT_EQ(slurp(dir + "/victim"), "keep me");
  EXPECT_TRUE(fs::is_symlink(dir + "/r.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2) << "a temporary was left";
}

// A FIFO with no reader: opening it for writing would wait for ever (SIGTERM did not end it). The
// report is refused at once; this test ends only if nothing opens the FIFO.
TEST(ReportFiles, APathSwappedForAFifoDuringTheRunIsRefusedWithoutWaiting) {
  const std::string dir = temp_dir("swap_fifo");
  JsonReport report(dir + "/r.json");
  report.mark_started("test");
  fs::remove(dir + "/r.json");
  ASSERT_EQ(::mkfifo((dir + "/r.json").c_str(), 0600), 0);
  try {
    report.finish(kHead);
    ADD_FAILURE() << "a FIFO was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
  }
  struct stat st;
  ASSERT_EQ(::lstat((dir + "/r.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(ReportFiles, AFinishedReportReplacesItsPlaceholder) {
  const std::string dir = temp_dir("finish");
  JsonReport report(dir + "/r.json");
  report.mark_started("test");
  EXPECT_NE(slurp(dir + "/r.json").find("\"running\""), std::string::npos);
  report.add({{"id", "x"}});
  report.finish(kHead);
  const auto j = nlohmann::json::parse(slurp(dir + "/r.json"));
  EXPECT_EQ(j.at("state"), "complete");
  EXPECT_EQ(j.at("cases").size(), 1u);
}

// A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored as touchstone does) fails writes with EFBIG
// like a full disk: each report then throws naming itself and the reason, and leaves its
// placeholder, no temporary and no half report.
TEST(ReportFiles, AReportThatCannotBeWrittenWhollyThrowsNamingIt) {
  const std::string dir = temp_dir("efbig");
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto fill = [](auto& report, auto&& add_one) {
    for (int k = 0; k < 200; ++k) add_one(report, k);
  };
  std::vector<std::string> messages;
  {
    JsonReport json(dir + "/r.json");
    JUnitReport junit(dir + "/r.xml", [](const CaseResult& r) { return r.id; });
    json.mark_started("test");
    junit.mark_started("test");
    const size_t g = junit.add_group("op/vulkan/float32");
    rlimit small = old_limit;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    try {
      fill(json, [](JsonReport& r, int k) { r.add({{"id", std::string(100, 'x') + std::to_string(k)}}); });
      json.finish(kHead);
    } catch (const std::runtime_error& e) {
      messages.push_back(e.what());
    }
    try {
      fill(junit, [&](JUnitReport& r, int k) {
        CaseResult c;
        c.id = std::string(100, 'y') + std::to_string(k), c.backend = "vulkan", c.outcome = Outcome::pass;
        r.add(g, c);
      });
      junit.finish();
    } catch (const std::runtime_error& e) {
      messages.push_back(e.what());
    }
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
  }
  std::signal(SIGXFSZ, old_handler);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].find(dir + "/r.json"), std::string::npos) << messages[0];
  EXPECT_NE(messages[1].find(dir + "/r.xml"), std::string::npos) << messages[1];
  for (const std::string& m : messages) EXPECT_NE(m.find("File too large"), std::string::npos) << m;
  EXPECT_NE(slurp(dir + "/r.json").find("\"running\""), std::string::npos);
  EXPECT_NE(slurp(dir + "/r.xml").find("INCOMPLETE"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_FALSE(e.path().filename().string().find(".tmp-") != std::string::npos) << "left behind: " << e.path();
}

// Each word through `bash -c 'printf "%s\0" WORD'` comes back unchanged and runs nothing.
TEST(ShellQuote, EveryWordComesBackFromTheShellAsItWas) {
  const std::string dir = temp_dir("quote");
  const std::vector<std::string> words = {"", "plain", "x'$(touch PWNED)'y", "a b", "'", "''", "\\", "\"$HOME\"",
                                          "`touch PWNED`", "tab\there", "new\nline", "!x", "*", "-n", "semi;colon&"};
  for (const std::string& w : words) {
    const std::string out = dir + "/out";
    const std::string cmd = "cd '" + dir + "' && printf '%s' " + shell_quote(w) + " > out";
    ASSERT_EQ(std::system(("bash -c " + shell_quote(cmd)).c_str()), 0) << cmd;
    EXPECT_EQ(slurp(out), w) << shell_quote(w);
    EXPECT_FALSE(fs::exists(dir + "/PWNED")) << shell_quote(w);
  }
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

// The duplicate check scanned every earlier entry: 150,000 ids took minutes. A quadratic check on
// this list would pass ctest's timeout; a linear one takes seconds.
TEST(XfailList, OneHundredFiftyThousandIdsLoadInLinearTime) {
  std::string text;
  const int n = 150000;
  for (int k = 0; k < n; ++k)
    text += "rope_half/B=1,H=1,S=1,D=4,pos=0/float32/buffer/seed=" + std::to_string(k) + "  # known\n";
  const XfailList list = XfailList::parse(text, "big.txt");
  EXPECT_EQ(list.entries().size(), size_t(n));
  EXPECT_NE(list.case_entry("rope_half/B=1,H=1,S=1,D=4,pos=0/float32/buffer/seed=149999", "vulkan"), nullptr);
  text += "rope_half/B=1,H=1,S=1,D=4,pos=0/float32/buffer/seed=7 webgpu  # another backend: fine\n";
  EXPECT_EQ(XfailList::parse(text, "big.txt").entries().size(), size_t(n) + 1);
  text += "rope_half/B=1,H=1,S=1,D=4,pos=0/float32/buffer/seed=7  # twice\n";
  try {
    XfailList::parse(text, "big.txt");
    ADD_FAILURE() << "a duplicate was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("big.txt:150002"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("listed already at big.txt:8"), std::string::npos) << e.what();
  }
}

TEST(XfailList, APatternNoGroupFitsIsRefusedNamingIt) {
  const XfailList list = XfailList::parse("rope_half/*/float32  # a\nsdpa/webgpu/*  # b\n", "k.txt");
  EXPECT_NO_THROW(list.require_reachable({{"rope_half", "vulkan", "float32"}, {"sdpa", "webgpu", "float16"}}));
  try {
    list.require_reachable({{"rope_half", "vulkan", "float32"}, {"sdpa", "vulkan", "float16"}});
    ADD_FAILURE() << "an unreachable pattern was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("k.txt:2: the pattern sdpa/webgpu/* matches no group"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ts
