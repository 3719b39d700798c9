#pragma once
// The executor of check: runs the sweep of a CheckOptions on its backends and streams, in sweep
// order, what happened to a CaseStream (tools/check_pipeline.h marks, records and reports it).
// Cases are prepared ahead (tools/check_prepare.h), run on every backend at once, one lane per
// backend, and compared on a pool of their own; the stream sees them one at a time, in order, and
// memory does not grow with the number of cases.
#include <memory>
#include <vector>

#include "core/runner.h"
#include "tools/backends.h"
#include "tools/check_run.h"
#include "tools/interrupt.h"

namespace ts {

// One case, as the stream gets it once its reference is ready.
struct CaseRun {
  const Sweep& sweep;
  int64_t k;                                 // its position in its op/dtype sweep
  uint64_t position;                         // in the whole sweep (the report's `index`)
  const Expected& e;
  int64_t elements;                          // input elements: what "smallest" compares
  const std::vector<std::string>& classes;   // its coverage classes
};

// What the executor streams: per sweep, each case position of this shard, then each backend's
// result of the cases that run, in slot order.
class CaseStream {
 public:
  virtual ~CaseStream() = default;
  virtual void sweep_started(const Sweep& sweep) = 0;
  virtual void case_reached() = 0;  // a case position of this shard: run next, or left out by --match
  // Backend `slot`'s result. false: stop the run after this result (--fail-fast).
  virtual bool result(size_t slot, const CaseResult& r, const CaseRun& c) = 0;
  virtual void case_finished(const CaseRun& c) = 0;  // not after a signal: the case may be disturbed
  virtual void sweep_finished() = 0;
};

class CheckExecutor {
 public:
  // `slots`: open backends (none where a slot's backend is UNAVAILABLE); `started`: start_check(o)'s.
  CheckExecutor(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart& started);
  ~CheckExecutor();
  CheckExecutor(const CheckExecutor&) = delete;
  CheckExecutor& operator=(const CheckExecutor&) = delete;

  // Runs every sweep until the end, a stop the stream asks for or a signal `guard` receives. On
  // return no lane holds work, so the backends may be called from this thread (shrinking).
  void run(CaseStream& out, const InterruptGuard& guard);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ts
