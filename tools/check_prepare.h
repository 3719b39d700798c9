#pragma once
// check prepares its cases ahead of the tally: each case's inputs, contract verdict, float64
// reference and tolerance are made on worker threads a few cases ahead of the one being judged
// (Lookahead), and the slow ones (a sweep's large case, on many cores its edge cases) sweeps ahead
// (CheckStart, EarlyCases). What the executor (tools/check_executor.h) hands to the backends.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/runner.h"
#include "core/task_pool.h"
#include "tools/check_run.h"
#include "tools/sweep.h"

namespace ts {

// The cores check plans its threads and how far ahead it prepares for: TOUCHSTONE_CORES if set, so
// that a test on 2 cores takes the paths of a 16-core machine, else the machine's.
unsigned check_cores();

// A case being prepared on a thread of its own (or a pool's): its inputs first (`made`: whether they were built),
// then its float64 reference (`done`). A lane runs the case as soon as it is made, while the
// reference is still being computed; comparing and the tally wait for done. On a GPU the lanes
// otherwise spend a large share of a warm check waiting for references they do not read.
struct Prepared {
  std::shared_ptr<Expected> e;
  // Its coverage classes, found on the same thread once the reference is done: an int8 operator's
  // redo the requantization, which took the tally's thread 0.4-0.7 s for a large case.
  std::shared_ptr<std::vector<std::string>> classes;
  std::shared_future<bool> made;
  std::shared_future<void> done;
  // Each backend's verdict (slot order; none where the slot has no backend), once handed to the
  // lanes (Judging::start).
  std::vector<std::shared_future<CaseResult>> judged;
  bool valid() const { return e != nullptr; }
};

// `pool`: where the case is prepared; none: a thread of its own.
Prepared launch(const OpDef& op, Case c, TaskPool* pool = nullptr);

// One sweep of the run and the run position of its case 0.
struct RunSweep {
  std::unique_ptr<Sweep> sweep;
  uint64_t first = 0;
};

// A sweep's cases prepared before the sweep starts, by index: its large case, if this shard and
// --match run it, and on a machine of 8 cores or more its hand-picked edge cases, some of whose
// references take most of a second (an int8 operator's conv reference), in the tally's path when
// prepared only a few cases ahead.
struct EarlyCases {
  std::optional<int64_t> large;
  std::map<int64_t, Prepared> cases;
};

// The large case's float64 reference takes longer than a whole sweep on a GPU: each is started
// large_ahead() sweeps before its own starts, so at most large_ahead() + 1 are in memory (~0.3 GB
// each). `first`: the run position of the sweep's case 0. A machine of 8 cores or more starts them
// all at once (8 cases, ~3 GB), which takes them off the tally's path while the other sweeps run.
size_t large_ahead();

// `edges`: where the edge cases are prepared (null: not early). The large case has a thread of its own.
EarlyCases start_early(const Sweep& sweep, uint64_t first, const CheckOptions& o, const Match& match,
                       TaskPool* edges);

// The cases of one sweep in order, each prepared (inputs, contract verdict, float64 reference,
// tolerance) on a worker thread a few cases ahead of the one being judged. The reference side is
// pure (counter-based inputs, a thread_local allocation limit); drawing a case (RapidCheck) stays on
// this thread. At most `depth` cases are held at once, so memory stays flat; a sweep's one large
// case (started early, start_early) is the only big one in flight.
class Lookahead {
 public:
  struct Next {
    int64_t k;
    uint64_t position;
    Prepared expected;  // not valid(): --match leaves the case out
  };
  // `early`: the sweep's cases started earlier (start_early).
  Lookahead(const Sweep& sweep, const CheckOptions& o, const Match& match, uint64_t& index,
            EarlyCases early)
      : sweep_(sweep), o_(o), match_(match), index_(index),
        depth_(std::clamp<size_t>(check_cores(), 2, 16)), early_(std::move(early)) {}

  std::optional<Next> next();

 private:
  const Sweep& sweep_;
  const CheckOptions& o_;
  const Match& match_;
  uint64_t& index_;
  const size_t depth_;
  int64_t k_ = 0;
  std::deque<Next> queue_;
  EarlyCases early_;
};

// The sweeps of a run, with the cases prepared early of the first ones (start_check).
struct CheckStart {
  std::vector<RunSweep> sweeps;
  std::deque<EarlyCases> early;  // those of sweeps [0, early.size())
  // Where the edge cases are prepared early: on 8 or more cores, every sweep's from the start.
  std::unique_ptr<TaskPool> edges;

  CheckStart(const CheckOptions& o, const SweepPlan& plan, const Match& match);
  // Starts preparing the early cases of sweeps up to `through`.
  void start_through(const CheckOptions& o, const Match& match, size_t through);
};

}  // namespace ts
