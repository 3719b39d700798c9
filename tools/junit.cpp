#include "tools/junit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "core/contract.h"
#include "goldens/files.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
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

// Follows symlinks, so the report replaces the link's target and the link stays.
std::string resolve_links(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

std::runtime_error write_error(const std::string& path) {
  return std::runtime_error(cat("cannot write ", path, ": ", std::strerror(errno)));
}

void put(std::FILE* f, std::string_view s, const std::string& path) {
  if (!s.empty() && std::fwrite(s.data(), 1, s.size(), f) != s.size()) throw write_error(path);
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

// Writes a report through `emit`: into a temporary file beside the destination, then renamed over
// it. A destination that exists and is not a regular file (a device or pipe that check_output_path
// let through) is written into, never replaced.
void write_report(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& emit) {
  const std::string target = resolve_links(path);
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::FILE* f = std::fopen(target.c_str(), "w");
    if (!f) throw write_error(target);
    try {
      emit(f, target);
    } catch (...) {
      std::fclose(f);
      throw;
    }
    if (std::fclose(f) != 0) throw write_error(target);
    return;
  }
  const std::string temp = write_temp_beside(target, "");
  std::FILE* f = std::fopen(temp.c_str(), "ab");
  try {
    if (!f) throw write_error(temp);
    emit(f, temp);
    if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) throw write_error(temp);
    std::FILE* closing = f;
    f = nullptr;
    if (std::fclose(closing) != 0) throw write_error(temp);
    commit_temp(temp, target);
  } catch (...) {
    if (f) std::fclose(f);
    ::unlink(temp.c_str());
    throw;
  }
  sync_dir(fs::path(target).parent_path().string());
}

bool is_failure(Outcome o) { return o != Outcome::pass && o != Outcome::rejected && o != Outcome::unsupported; }

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

JUnitReport::~JUnitReport() {
  for (auto& g : groups_)
    if (g.body) std::fclose(g.body);
}

void JUnitReport::mark_started(const std::string& what) {
  const std::string target = resolve_links(path_);
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // a device or pipe holds nothing stale
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  write_file_atomic(target, cat(kHead, notice_suite("incomplete", "INCOMPLETE",
                                                    cat(what, " started at ", when, " (pid ", ::getpid(),
                                                        ") and has not finished: it is still running, or was "
                                                        "killed or crashed. This file holds no results yet.")),
                                kTail));
}

size_t JUnitReport::add_group(const std::string& name) {
  Group g;
  g.name = name;
  g.body = std::tmpfile();  // unnamed: nothing is left behind, whatever ends the process
  if (!g.body) throw std::runtime_error(cat("cannot create a temporary file for the JUnit report: ", std::strerror(errno)));
  groups_.push_back(std::move(g));
  return groups_.size() - 1;
}

void JUnitReport::add(size_t group, const CaseResult& r) {
  Group& g = groups_.at(group);
  ++g.tests;
  g.time += r.seconds;
  std::string tc = cat("    <testcase classname=\"", xml_text(g.name), "\" name=\"", xml_text(r.id), "\" time=\"",
                       seconds(r.seconds), "\">");
  if (r.outcome == Outcome::unsupported) {
    ++g.skipped;
    tc += cat("<skipped message=\"", xml_text(r.detail), "\"/>");
  } else if (is_failure(r.outcome)) {
    ++g.failures;
    tc += cat("<failure type=\"", outcome_name(r.outcome), "\" message=\"", xml_text(r.detail), "\">",
              xml_text(rerun_(r)), "</failure>");
  }
  tc += "</testcase>\n";
  put(g.body, tc, "the JUnit report's temporary file");
}

void JUnitReport::finish(const std::string& interrupted) {
  write_report(path_, [&](std::FILE* f, const std::string& name) {
    put(f, kHead, name);
    for (auto& g : groups_) {
      put(f, cat("  <testsuite name=\"", xml_text(g.name), "\" tests=\"", g.tests, "\" failures=\"", g.failures,
                 "\" skipped=\"", g.skipped, "\" time=\"", seconds(g.time), "\">\n"), name);
      if (std::fflush(g.body) != 0 || std::fseek(g.body, 0, SEEK_SET) != 0) throw write_error("a temporary file");
      char buf[1 << 16];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, g.body)) > 0) put(f, std::string_view(buf, n), name);
      if (std::ferror(g.body)) throw write_error("a temporary file");
      std::fseek(g.body, 0, SEEK_END);  // further add()s append
      put(f, "  </testsuite>\n", name);
    }
    if (!interrupted.empty()) put(f, notice_suite("interrupted", "INTERRUPTED", interrupted), name);
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

}  // namespace ts
