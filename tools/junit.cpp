#include "tools/junit.h"

#include <unistd.h>

#include <cctype>

#include "core/contract.h"
#include "goldens/files.h"
#include "tools/check_pipeline.h"
#include "tools/report_json.h"
#include "tools/tally.h"

namespace ts {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at s[i] encoding a character XML 1.0 allows
// (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), else 0.
size_t xml_char_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  const unsigned b = byte(0);
  if (b < 0x80) return (b >= 0x20 || b == 0x9 || b == 0xA || b == 0xD) ? 1 : 0;
  if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    const unsigned b1 = byte(1);
    if (!cont(1) || !cont(2)) return 0;
    if (b == 0xE0 && b1 < 0xA0) return 0;                        // overlong
    if (b == 0xED && b1 > 0x9F) return 0;                        // UTF-16 surrogates
    if (b == 0xEF && b1 == 0xBF && byte(2) >= 0xBE) return 0;    // U+FFFE, U+FFFF
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    const unsigned b1 = byte(1);
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F)) return 0;  // overlong, past U+10FFFF
    return 4;
  }
  return 0;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);  // a plain decimal: JUnit readers reject 1e-05
  return buf;
}

// A testsuite holding one failing testcase, for reports that are not a run's results.
std::string notice_suite(const std::string& suite, const std::string& type, const std::string& message) {
  return cat("  <testsuite name=\"", suite, "\" tests=\"1\" failures=\"1\" skipped=\"0\" time=\"0\">\n",
             "    <testcase classname=\"", suite, "\" name=\"touchstone run\" time=\"0\"><failure type=\"", type,
             "\" message=\"", xml_text(message), "\">", xml_text(message), "</failure></testcase>\n  </testsuite>\n");
}

constexpr std::string_view kHead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"touchstone\">\n";
constexpr std::string_view kTail = "</testsuites>\n";

}  // namespace

std::string xml_text(std::string_view s) {
  std::string r;
  r.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = xml_char_length(s, i);
    if (n == 0) {
      r += kReplacement;
      ++i;
      continue;
    }
    switch (s[i]) {
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '&': r += "&amp;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&apos;"; break;
      case '\n': r += "&#10;"; break;  // kept through attribute-value normalisation
      case '\r': r += "&#13;"; break;
      case '\t': r += "&#9;"; break;
      default: r.append(s.substr(i, n));
    }
    i += n;
  }
  return r;
}

JUnitReport::JUnitReport(std::string path, RerunLine rerun) : path_(std::move(path)), rerun_(std::move(rerun)) {}

void JUnitReport::mark_started(const std::string& what) {
  write_notice(path_, cat(kHead, notice_suite("incomplete", "INCOMPLETE",
                                              cat(what, " started at ", utc_now(), " (pid ", ::getpid(),
                                                  ") and has not finished: it is still running, or was "
                                                  "killed or crashed. This file holds no results yet.")),
                          kTail));
}

size_t JUnitReport::add_group(const std::string& name) {
  groups_.push_back(Group{name, Spool(path_), 0, 0, 0, 0});
  return groups_.size() - 1;
}

void JUnitReport::add(size_t group, const CaseResult& r, Mark mark, const XfailEntry* xfail) {
  Group& g = groups_.at(group);
  ++g.tests;
  g.time += r.seconds;
  std::string tc = cat("    <testcase classname=\"", xml_text(g.name), "\" name=\"", xml_text(r.id), "\" time=\"",
                       seconds(r.seconds), "\">");
  const std::string listed = xfail ? cat("listed as a known failure at ", xfail->where, " (", xfail->reason, ")") : "";
  if (mark == Mark::xfail) {
    ++g.skipped;
    tc += cat("<skipped type=\"XFAIL\" message=\"", xml_text(cat("XFAIL ", listed, ": ", outcome_name(r.outcome), ": ", r.detail)),
              "\"/>");
  } else if (mark == Mark::xpass) {
    ++g.failures;
    tc += cat("<failure type=\"XPASS\" message=\"", xml_text(cat(listed, " but ", outcome_name(r.outcome))), "\">",
              xml_text(rerun_(r)), "</failure>");
  } else if (mark == Mark::unexpected_unsupported) {
    ++g.failures;
    tc += cat("<failure type=\"UNEXPECTED_UNSUPPORTED\" message=\"",
              xml_text(cat("the device profile requires ", r.capability, ": ", r.detail)), "\">", xml_text(rerun_(r)),
              "</failure>");
  } else if (r.outcome == Outcome::unsupported) {
    ++g.skipped;
    tc += cat("<skipped message=\"", xml_text(r.detail), "\"/>");
  } else if (is_failure(r.outcome)) {
    ++g.failures;
    tc += cat("<failure type=\"", outcome_name(r.outcome), "\" message=\"", xml_text(r.detail), "\">",
              xml_text(rerun_(r)), "</failure>");
  }
  tc += "</testcase>\n";
  g.body.append(tc);
}

void JUnitReport::add_notice(size_t group, const std::string& name, const std::string& type, const std::string& message) {
  Group& g = groups_.at(group);
  ++g.tests;
  ++g.failures;
  g.body.append(cat("    <testcase classname=\"", xml_text(g.name), "\" name=\"", xml_text(name),
                    "\" time=\"0\"><failure type=\"", xml_text(type), "\" message=\"", xml_text(message), "\">",
                    xml_text(message), "</failure></testcase>\n"));
}

void JUnitReport::finish(const std::string& partial, const std::string& kind) {
  write_report(path_, [&](std::FILE* f, const std::string& name) {
    put(f, kHead, name);
    for (auto& g : groups_) {
      put(f, cat("  <testsuite name=\"", xml_text(g.name), "\" tests=\"", g.tests, "\" failures=\"", g.failures,
                 "\" skipped=\"", g.skipped, "\" time=\"", seconds(g.time), "\">\n"), name);
      g.body.copy_to(f, name);
      put(f, "  </testsuite>\n", name);
    }
    if (!partial.empty()) {
      std::string type = kind;
      for (char& c : type) c = char(std::toupper(static_cast<unsigned char>(c)));
      put(f, notice_suite(kind, type, partial), name);
    }
    put(f, kTail, name);
  });
}

void write_junit(const std::string& path, const std::vector<std::pair<std::string, std::vector<CaseResult>>>& groups,
                 const RerunLine& rerun) {
  JUnitReport report(path, rerun);
  for (auto& [name, results] : groups) {
    const size_t g = report.add_group(name);
    for (auto& r : results) report.add(g, r);
  }
  report.finish();
}

namespace {

// check --junit: a testsuite per group, a testcase per case run.
class JUnitCheckReporter : public CheckReporter {
 public:
  explicit JUnitCheckReporter(const CheckOptions& o)
      : report_(o.junit, [dir = o.backends.kernels.dir](const CaseResult& r) { return repro_line(r.id, r.backend, dir); }) {
    report_.mark_started("touchstone check");
  }

  void sweep_started(const Sweep&, std::span<const Group> groups) override {
    for (const Group& g : groups) {
      suites_.push_back(report_.add_group(g.name));
      if (g.slot->backend) continue;
      CaseResult r;
      r.id = "backend unavailable";
      r.backend = g.slot->name;
      r.outcome = Outcome::unsupported;
      r.detail = cat(g.slot->name, " UNAVAILABLE on this machine: ", g.slot->unavailable);
      report_.add(suites_.back(), r);
    }
  }

  void result(const CaseVerdict& v) override { report_.add(suites_[v.group_index], v.r, v.mark, v.listed); }

  void run_finished(const FinishedRun& end) override {
    const CheckRun& run = end.run;
    for (size_t i = 0; i < run.groups.size(); ++i) {
      const Group& g = run.groups[i];
      if (g.pattern_stale.value_or(false))
        report_.add_notice(suites_[i], cat("xfail ", g.pattern->entry), "XPASS",
                           cat("listed as a known failure at ", g.pattern->where, " (", g.pattern->reason, ") but ",
                               g.name, " ran ", g.tally.cases, " cases without a failure"));
    }
    report_.finish(run.state == "complete" ? "" : cat("touchstone check: ", run.stop_reason, ": this report is partial"),
                   run.state);
  }

 private:
  JUnitReport report_;
  std::vector<size_t> suites_;  // per group of the run
};

}  // namespace

std::unique_ptr<CheckReporter> junit_reporter(const CheckOptions& o) { return std::make_unique<JUnitCheckReporter>(o); }

}  // namespace ts
