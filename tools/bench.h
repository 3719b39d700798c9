#pragma once
// The rule `touchstone bench` times by: a case is judged against the reference first, exactly as
// check judges it, and timed only if it passed, so a fast wrong kernel is a FAIL, never a time.
#include <string>

#include "core/runner.h"
#include "gpu/gpu_backend.h"

namespace ts {

struct JudgedTiming {
  Outcome outcome = Outcome::error;
  std::string detail;  // why not PASS (REJECTED: the rule), or why a PASS was not timed
  bool timed = false;
  BenchTiming timing;  // status ok when timed
};

JudgedTiming judge_then_time(const Expected& e, GpuBackend& backend, const TimingBudget& budget);

}  // namespace ts
