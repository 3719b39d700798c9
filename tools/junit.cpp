#include "tools/junit.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "core/contract.h"

namespace ts {
namespace {

std::string xml(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '&': r += "&amp;"; break;
      case '"': r += "&quot;"; break;
      default: r += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
    }
  }
  return r;
}

}  // namespace

void write_junit(const std::string& path, const std::vector<std::pair<std::string, std::vector<CaseResult>>>& groups,
                 const std::function<std::string(const CaseResult&)>& rerun) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"touchstone\">\n";
    for (auto& [name, results] : groups) {
      int failures = 0, skipped = 0;
      double time = 0;
      for (auto& r : results) {
        failures += r.outcome != Outcome::pass && r.outcome != Outcome::rejected && r.outcome != Outcome::unsupported;
        skipped += r.outcome == Outcome::unsupported;
        time += r.seconds;
      }
      f << cat("  <testsuite name=\"", xml(name), "\" tests=\"", results.size(), "\" failures=\"", failures,
               "\" skipped=\"", skipped, "\" time=\"", time, "\">\n");
      for (auto& r : results) {
        f << cat("    <testcase classname=\"", xml(name), "\" name=\"", xml(r.id), "\" time=\"", r.seconds, "\">");
        if (r.outcome == Outcome::unsupported)
          f << "<skipped message=\"" << xml(r.detail) << "\"/>";
        else if (r.outcome != Outcome::pass && r.outcome != Outcome::rejected)
          f << cat("<failure type=\"", outcome_name(r.outcome), "\" message=\"", xml(r.detail), "\">",
                   xml(rerun(r)), "</failure>");
        f << "</testcase>\n";
      }
      f << "  </testsuite>\n";
    }
    f << "</testsuites>\n";
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace ts
