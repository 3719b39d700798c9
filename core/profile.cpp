#include "core/profile.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace ts {
namespace {

struct Totals {
  std::mutex m;
  std::map<std::string, std::pair<double, long long>> by_phase;  // seconds, calls
  ~Totals() {
    if (by_phase.empty()) return;
    std::fprintf(stderr, "\nprofile (TOUCHSTONE_PROFILE=1): phase, seconds, calls, ms per call\n");
    for (auto& [name, t] : by_phase)
      std::fprintf(stderr, "  %-34s %9.3f %9lld %9.3f\n", name.c_str(), t.first, t.second, 1e3 * t.first / double(t.second));
  }
};

Totals& totals() {
  static Totals t;
  return t;
}

}  // namespace

bool profiling() {
  static const bool on = [] {
    const char* v = std::getenv("TOUCHSTONE_PROFILE");
    if (v && std::string(v) == "1") totals();  // constructed first: destroyed (and printed) last
    return v && std::string(v) == "1";
  }();
  return on;
}

void profile_add(std::string_view phase, double seconds) {
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.m);
  auto& [s, n] = t.by_phase[std::string(phase)];
  s += seconds;
  ++n;
}

}  // namespace ts
