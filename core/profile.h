#pragma once
// Where a run's host time goes, phase by phase, for finding the slow part of the host path on a
// machine one cannot attach a profiler to: with TOUCHSTONE_PROFILE=1 in the environment every
// Phase adds its wall time to a named total, and the totals (seconds, calls, ms per call) are
// printed to stderr at exit. Off, a Phase costs one cached flag test.
#include <chrono>
#include <string_view>

namespace ts {

bool profiling();
void profile_add(std::string_view phase, double seconds);

class Phase {
 public:
  explicit Phase(std::string_view name) : name_(name), on_(profiling()) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~Phase() {
    if (on_) profile_add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  std::string_view name_;  // a string literal
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace ts
