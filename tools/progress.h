#pragma once
// The live line of a long sweep on a terminal: positions done of the total, rate, time left and
// failures so far, redrawn in place on stderr a few times a second once the sweep has run for
// kShowAfterSeconds. Off a terminal (a CI log, a pipe) it prints nothing: the sweep's plain lines
// are all there is.
#include <chrono>
#include <string>

namespace ts {

class Progress {
 public:
  static constexpr double kShowAfterSeconds = 2;
  // `enabled`: stderr is a terminal and --quiet was not given.
  Progress(long long total, bool enabled);
  ~Progress() { clear(); }
  bool enabled() const { return enabled_; }
  void update(long long done, long long failing);  // cheap when nothing is drawn
  void clear();                                    // erases the line (before other stderr output)

 private:
  long long total_;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point start_, next_;
};

// "  1,234 of 5,000 cases (24.7%)  412 cases/s  ETA 0:09  2 failing"
std::string progress_text(long long done, long long total, double seconds, long long failing);

}  // namespace ts
