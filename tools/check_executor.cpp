#include "tools/check_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <optional>

#include "core/profile.h"
#include "core/task_pool.h"
#include "tools/check_prepare.h"
#include "tools/shrink.h"

namespace ts {
namespace {

constexpr size_t kInFlight = 8;  // cases a lane thread may run ahead of the stream

// Every call into backend s (warm, run_case) runs on lanes[s], taken in the order handed in: a case
// runs on every backend at once, so with two one's GPU round trip overlaps the other's (run one
// backend after the other, a GPU's default check took several times as long: PERFORMANCE.md). A
// lane has as many threads as its backend takes calls at once (Backend::concurrency: 1 on lavapipe,
// where each case already spreads over the cores). Comparing is not a backend call: it runs on a
// pool of its own (State::comparing).
using Lanes = std::vector<std::unique_ptr<TaskPool>>;

// Hands a prepared case to every backend's lane: the lane runs it once its inputs are made, then
// `comparing` judges the run once the reference is done.
struct Judging {
  std::vector<BackendSlot>& slots;
  Lanes& lanes;
  TaskPool& comparing;
  std::atomic<bool>& cancel;  // set when the run stops: queued judges return at once

  void start(Prepared& p) {
    p.judged.assign(slots.size(), {});
    for (size_t s = 0; s < slots.size(); ++s) {
      Backend* b = slots[s].backend.get();
      if (!b) continue;
      auto judged = std::make_shared<std::promise<CaseResult>>();
      p.judged[s] = judged->get_future().share();
      lanes[s]->submit([b, x = p, &cancel = cancel, &comparing = comparing, judged] {
        try {
          if (cancel) return judged->set_value(CaseResult{});
          const bool built = [&] {
            Phase waiting("check: a lane waits for its case's inputs");
            return x.made.get();
          }();
          auto ran = std::make_shared<BackendRun>(built ? run_case(*x.e->op, x.e->problem, *b)
                                                        : BackendRun{std::string(b->kind())});
          comparing.submit([x, ran, judged] {
            try {
              x.done.get();
              judged->set_value(judge_run(*x.e, std::move(*ran)));
            } catch (...) {
              judged->set_exception(std::current_exception());
            }
          });
        } catch (...) {
          judged->set_exception(std::current_exception());
        }
      });
    }
  }
};

// The kernels of the cases ahead are handed to the backends to compile, kWarmChunk cases at a time,
// up to kWarmAhead run positions past the case being judged, across sweeps: not only those of the
// `depth` cases Lookahead prepares. On a GPU a cold pipeline takes a sizeable part of a second to
// create (the driver's compiler; Dawn makes one device's one at a time), a sweep needs ~10-20
// distinct ones and runs in about a second, so the next sweeps' kernels compile while this one runs. The cases are drawn here; their
// problems (inputs, no reference) are built on a worker thread and handed to the lanes once the
// chunk is built. A case that does not build, or breaks the contract, is left to its own run; a
// sweep's large case runs the kernels of the cases around it, so it is not built twice.
class WarmAhead {
 public:
  WarmAhead(const std::vector<RunSweep>& sweeps, const CheckOptions& o, const Match& match,
            std::vector<BackendSlot>& slots, Lanes& lanes)
      : sweeps_(sweeps), o_(o), match_(match), slots_(slots), lanes_(lanes) {
    if (std::none_of(slots.begin(), slots.end(), [](const BackendSlot& s) { return s.backend != nullptr; }))
      j_ = sweeps_.size();  // nothing to warm
  }

  // `position`: the run position of the next case Lookahead prepares. Starts at most one chunk.
  void advance(uint64_t position) {
    if (building_.valid()) {
      if (building_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
      hand_over(building_op_, std::make_shared<const std::vector<Problem>>(building_.get()));
    }
    if (j_ >= sweeps_.size() || sweeps_[j_].first + uint64_t(k_) > position + kWarmAhead) return;
    const Sweep& sweep = *sweeps_[j_].sweep;
    const std::optional<int64_t> large = sweep.large_index();
    const int64_t end = std::min(sweep.size(), k_ + kWarmChunk);
    std::vector<Case> cases;
    for (int64_t k = k_; k < end; ++k) {
      if ((sweeps_[j_].first + uint64_t(k)) % o_.shards != o_.shard || k == large) continue;
      Phase drawing("check: draw the case (generators)");
      Case c = sweep.at(k);
      if (!match_ || match_->search(c.id())) cases.push_back(std::move(c));
    }
    building_op_ = &sweep.op();
    building_ = std::async(std::launch::async, [op = building_op_, cases = std::move(cases)] {
      std::vector<Problem> problems;
      for (const Case& c : cases) {
        try {
          AllocationLimit limit(kMaxCaseBytes);
          Problem p = make_problem(*op, c);
          if (!op->validate(p)) problems.push_back(std::move(p));
        } catch (const std::exception&) {
          // The case's own run reports it.
        }
      }
      return problems;
    });
    k_ = end;
    if (k_ == sweep.size()) ++j_, k_ = 0;
  }

 private:
  static constexpr int64_t kWarmChunk = 256;
  // A machine of 8 cores or more warms the whole run from the start: its compile threads (Vulkan)
  // and Dawn workers (WebGPU, one pipeline at a time each) then make every kernel side by side.
  const uint64_t kWarmAhead = check_cores() >= 8 ? UINT64_MAX / 2 : 512;

  void hand_over(const OpDef* op, std::shared_ptr<const std::vector<Problem>> problems) {
    for (size_t s = 0; s < slots_.size(); ++s)
      if (Backend* b = slots_[s].backend.get())
        lanes_[s]->submit([b, op, problems] {
          Phase ph("check: compile ahead a chunk of cases' kernels");
          for (const Problem& p : *problems) b->warm(*op, p);
        });
  }

  const std::vector<RunSweep>& sweeps_;
  const CheckOptions& o_;
  const Match& match_;
  std::vector<BackendSlot>& slots_;
  Lanes& lanes_;
  size_t j_ = 0;                 // the next case to warm: sweep j_, case k_
  int64_t k_ = 0;
  std::future<std::vector<Problem>> building_;  // a chunk's problems
  const OpDef* building_op_ = nullptr;
};

Lanes open_lanes(const std::vector<BackendSlot>& slots) {
  Lanes lanes(slots.size());
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].backend) lanes[s] = std::make_unique<TaskPool>(std::max(1u, slots[s].backend->concurrency()));
  return lanes;
}

// Cases a lane may run ahead of the stream, per thread of the busiest lane.
size_t cases_in_flight(const std::vector<BackendSlot>& slots) {
  unsigned threads = 1;
  for (auto& slot : slots)
    if (slot.backend) threads = std::max(threads, slot.backend->concurrency());
  return kInFlight * threads;
}

}  // namespace

struct CheckExecutor::State {
  const CheckOptions& o;
  std::vector<BackendSlot>& slots;
  CheckStart& started;
  const Match match;
  uint64_t index = 0;  // the run position of the next case Lookahead prepares
  bool stopped = false;
  std::atomic<bool> cancel{false};  // set when the run stops: queued judges return at once
  // Comparing took a large share of a lane's time on a GPU: it runs here, so a lane only calls its
  // backend. Declared before the lanes, which hand work to it, so it outlives them.
  TaskPool comparing;
  Lanes lanes;
  const size_t in_flight;
  WarmAhead warm;
  Judging judging;

  State(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart& started)
      : o(o), slots(slots), started(started), match(match_regex(o.match)),
        comparing(std::clamp(check_cores() / 2, 1u, 8u)), lanes(open_lanes(slots)),
        in_flight(cases_in_flight(slots)), warm(started.sweeps, o, match, slots, lanes),
        judging{slots, lanes, comparing, cancel} {}

  // A large case goes to the lanes as soon as they exist: a lane takes it when its inputs are made,
  // long before the stream reaches it (its run takes about a second, mostly packing 16M values).
  void start_through(size_t through) {
    started.start_through(o, match, through);
    for (EarlyCases& e : started.early)
      if (e.large && e.cases.at(*e.large).judged.empty()) judging.start(e.cases.at(*e.large));
  }

  void run_sweep(const Sweep& sweep, EarlyCases cases, CaseStream& out, const InterruptGuard& guard) {
    Lookahead ahead(sweep, o, match, index, std::move(cases));
    // Cases handed to the lanes and not yet streamed, in order: a lane runs up to in_flight cases
    // ahead of the stream, so one backend's slow case (a pipeline still compiling) does not hold the
    // other back. A judge holds its case's shared_future, not a reference.
    std::deque<Lookahead::Next> flight;
    std::optional<Lookahead::Next> deferred;
    bool drawn_all = false;
    while (!stopped) {
      while (!drawn_all && flight.size() < in_flight) {
        warm.advance(index);
        auto next = ahead.next();
        if (!next) {
          drawn_all = true;
          break;
        }
        if (!next->expected.valid()) {  // --match leaves it out
          out.case_reached();
          continue;
        }
        if (next->expected.judged.empty()) judging.start(next->expected);  // a large case's were started with it
        flight.push_back(std::move(*next));
      }
      // The sweep's large case is streamed last: its reference and its run (started when it was
      // launched) take seconds, and waiting for it would hold the lanes that long.
      if (flight.empty() && !deferred) break;
      Lookahead::Next current = std::move(flight.empty() ? *deferred : flight.front());
      if (flight.empty()) {
        deferred.reset();
      } else {
        flight.pop_front();
        if (current.k == sweep.large_index()) {
          deferred = std::move(current);
          continue;
        }
      }
      out.case_reached();
      hand_on(sweep, current, out, guard);
    }
  }

  // Waits for the case's reference and each backend's verdict, and streams them.
  void hand_on(const Sweep& sweep, Lookahead::Next& current, CaseStream& out, const InterruptGuard& guard) {
    const Expected& e = [&]() -> const Expected& {
      Phase waiting("check: wait for the case's reference (prepared ahead)");
      current.expected.done.get();
      return *current.expected.e;
    }();
    const CaseRun c{sweep, current.k, current.position, e, input_elements(e), *current.expected.classes};
    for (size_t s = 0; s < slots.size() && !stopped; ++s) {
      if (!slots[s].backend) continue;
      const CaseResult r = [&] {
        Phase waiting("check: wait for the case's judges (lanes, comparing)");
        return current.expected.judged[s].get();
      }();
      if (guard.signal()) {  // the case may have been disturbed (a worker got the signal too)
        stopped = true;
        return;
      }
      if (!out.result(s, r, c)) stopped = true;
    }
    if (guard.signal()) {
      stopped = true;
      return;
    }
    out.case_finished(c);
  }
};

CheckExecutor::CheckExecutor(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart& started)
    : s_(std::make_unique<State>(o, slots, started)) {}

CheckExecutor::~CheckExecutor() = default;

void CheckExecutor::run(CaseStream& out, const InterruptGuard& guard) {
  State& s = *s_;
  const std::vector<RunSweep>& sweeps = s.started.sweeps;
  for (size_t j = 0; j < sweeps.size() && !s.stopped; ++j) {
    const Sweep& sweep = *sweeps[j].sweep;
    s.start_through(j + large_ahead());
    EarlyCases cases = std::move(s.started.early[j]);  // sweep j's, started
    s.started.early[j] = EarlyCases{};
    out.sweep_started(sweep);
    s.run_sweep(sweep, std::move(cases), out, guard);
    s.cancel = s.stopped;  // judges still queued for the cases past the stop do nothing
    out.sweep_finished();
  }
  for (auto& lane : s.lanes)
    if (lane) lane->drain();  // compiles handed ahead: shrinking calls the backends from this thread
}

}  // namespace ts
