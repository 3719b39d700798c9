#pragma once
// Ctrl-C and `kill` during a sweep: while an InterruptGuard lives, the first SIGINT or SIGTERM only
// records the signal, so the sweep stops after the case in progress, writes its report marked as
// partial and exits 128 + signal. A second signal of the same kind ends the process at once (the
// report then still says the run did not finish: see JUnitReport::mark_started).
namespace ts {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  int signal() const;  // the first signal received, 0 while none
};

const char* signal_name(int sig);  // "SIGINT", "SIGTERM"

}  // namespace ts
