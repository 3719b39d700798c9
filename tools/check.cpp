// touchstone check: the differential sweep over operators x backends x dtypes. Cases are made,
// judged and forgotten one at a time: what stays is tools/check_run.h; the JSON and JUnit reports
// stream their cases to temporary files.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "core/linear_regex.h"
#include "core/profile.h"
#include "core/runner.h"
#include "core/task_pool.h"
#include "goldens/files.h"
#include "gpu/plans/coverage.h"
#include "gpu/plans/registry.h"
#include "tools/check_run.h"
#include "tools/commands.h"
#include "tools/environment.h"
#include "tools/html_report.h"
#include "tools/interrupt.h"
#include "tools/junit.h"
#include "tools/progress.h"
#include "tools/report_json.h"
#include "tools/shell_quote.h"
#include "tools/shrink.h"
#include "tools/sweep.h"

namespace ts {
namespace {

constexpr double kProgressSeconds = 2;

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += cat(s.empty() ? "" : ", ", dtype_name(t));
  return s;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


using Match = std::optional<LinearRegex>;

Match match_regex(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  return LinearRegex(pattern, "--match");
}

// A --match that selects no case of the sweep (all shards together: one shard of a narrow filter
// may rightly get none) is a usage error. Stops at the first match, so only a filter that selects
// nothing draws the whole sweep before the run.
void require_a_match(const CheckOptions& o, const SweepPlan& plan, const Match& match) {
  if (!match) return;
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      Sweep sweep(*op, t, o.cases, o.seed);
      for (int64_t k = 0; k < sweep.size(); ++k)
        if (match->search(sweep.at(k).id())) return;
    }
  throw UsageError(cat("--match ", shell_quote(o.match), " selects no case of the sweep (", plan.size(),
                       " operators, ", o.cases, " cases per dtype): nothing would run"));
}

// check --list: the ids the sweep would run, one a line; nothing opens, nothing runs.
int list_cases(const CheckOptions& o, const SweepPlan& plan) {
  for_each_case(o, plan, [](uint64_t, const OpDef&, DType, const std::string& id) { std::printf("%s\n", id.c_str()); });
  return std::fflush(stdout) == 0 ? 0 : 2;
}

// The cores check plans its threads and how far ahead it prepares for: TOUCHSTONE_CORES if set, so
// that a test on 2 cores takes the paths of a 16-core machine, else the machine's.
unsigned check_cores() {
  if (const auto n = env_cores()) return *n;
  return std::max(1u, std::thread::hardware_concurrency());
}

constexpr size_t kInFlight = 8;  // cases a lane thread may run ahead of the tally (run_check)

// Every call into backend s (warm, run_case) runs on lanes[s], taken in the order handed in: a case
// runs on every backend at once, so with two one's GPU round trip overlaps the other's (run one
// backend after the other, a GPU's default check took several times as long: PERFORMANCE.md). A lane has as many threads as
// its backend takes calls at once (Backend::concurrency: 1 on lavapipe, where each case already
// spreads over the cores). Comparing is not a backend call: it runs on a pool of its own
// (run_check's `comparing`).
using Lanes = std::vector<std::unique_ptr<TaskPool>>;

// A case being prepared on a thread of its own (or a pool's): its inputs first (`made`: whether they were built),
// then its float64 reference (`done`). A lane runs the case as soon as it is made, while the
// reference is still being computed; comparing and the tally wait for done. On a GPU the lanes
// otherwise spend a large share of a warm check waiting for references they do not read.
struct Prepared {
  std::shared_ptr<Expected> e;
  // Its coverage classes, found on the same thread once the reference is done: q8ta's redo the
  // requantization, which took the tally's thread 0.4-0.7 s for a large case.
  std::shared_ptr<std::vector<std::string>> classes;
  std::shared_future<bool> made;
  std::shared_future<void> done;
  // Each backend's verdict (slot order; none where the slot has no backend), once handed to the
  // lanes (Judging::start).
  std::vector<std::shared_future<CaseResult>> judged;
  bool valid() const { return e != nullptr; }
};

// `pool`: where the case is prepared; none: a thread of its own.
Prepared launch(const OpDef& op, Case c, TaskPool* pool = nullptr) {
  Prepared p;
  p.e = std::make_shared<Expected>();
  p.classes = std::make_shared<std::vector<std::string>>();
  auto made = std::make_shared<std::promise<bool>>();
  p.made = made->get_future().share();
  auto work = [e = p.e, classes = p.classes, made, &op, c = std::move(c)] {
    bool told = false;
    try {
      prepare(*e, op, c, kMaxCaseBytes, [&](bool built) {
        told = true;
        made->set_value(built);
      });
    } catch (...) {
      if (!told) made->set_exception(std::current_exception());
      throw;
    }
    *classes = case_classes(*e);
  };
  if (!pool) {
    p.done = std::async(std::launch::async, std::move(work)).share();
    return p;
  }
  auto done = std::make_shared<std::promise<void>>();
  p.done = done->get_future().share();
  pool->submit([work = std::move(work), done] {
    try {
      work();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  });
  return p;
}

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

// One sweep of the run and the run position of its case 0.
struct RunSweep {
  std::unique_ptr<Sweep> sweep;
  uint64_t first = 0;
};

// A sweep's cases prepared before the sweep starts, by index: its large case, if this shard and
// --match run it, and on a machine of 8 cores or more its hand-picked edge cases, some of whose
// references take most of a second (q8ta_conv2d's 512x512 3x3 conv), in the tally's path when
// prepared only a few cases ahead.
struct EarlyCases {
  std::optional<int64_t> large;
  std::map<int64_t, Prepared> cases;
};

// The large case's float64 reference takes longer than a whole sweep on a GPU: each is started
// large_ahead() sweeps before its own starts, so at most large_ahead() + 1 are in memory (~0.3 GB
// each). `first`: the run position of the sweep's case 0. A machine of 8 cores or more starts them
// all at once (8 cases, ~3 GB), which takes them off the tally's path while the other sweeps run.
size_t large_ahead() {
  const size_t cores = check_cores();
  return cores >= 8 ? SIZE_MAX / 2 : std::max<size_t>(1, cores / 2);
}

// `edges`: where the edge cases are prepared (null: not early). The large case has a thread of its own.
EarlyCases start_early(const Sweep& sweep, uint64_t first, const CheckOptions& o, const Match& match,
                       TaskPool* edges) {
  EarlyCases early;
  const std::optional<int64_t> large = sweep.large_index();
  for (int64_t k = 0; k < sweep.edges(); ++k) {
    if ((k != large && !edges) || (first + uint64_t(k)) % o.shards != o.shard) continue;
    Case c = sweep.at(k);
    if (match && !match->search(c.id())) continue;
    if (k == large) early.large = k;
    early.cases.emplace(k, launch(sweep.op(), std::move(c), k == large ? nullptr : edges));
  }
  return early;
}

// The cases of one sweep in order, each prepared (inputs, contract verdict, float64 reference,
// tolerance) on a worker thread a few cases ahead of the one being judged. The reference side is
// pure (counter-based inputs, a thread_local allocation limit); drawing a case (RapidCheck) stays on
// this thread. At most `depth` cases are held at once, so memory stays flat; a sweep's one large
// case (started early, start_large) is the only big one in flight.
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

  std::optional<Next> next() {
    while (queue_.size() < depth_ && k_ < sweep_.size()) {
      const int64_t k = k_++;
      const uint64_t position = index_++;
      if (position % o_.shards != o_.shard) continue;
      Next n{k, position, {}};
      if (auto e = early_.cases.find(k); e != early_.cases.end()) {
        n.expected = std::move(e->second);
        early_.cases.erase(e);
      } else {
        Phase drawing("check: draw the case (generators)");
        Case c = sweep_.at(k);
        if (!match_ || match_->search(c.id())) n.expected = launch(sweep_.op(), std::move(c));
      }
      queue_.push_back(std::move(n));
    }
    if (queue_.empty()) return std::nullopt;
    Next n = std::move(queue_.front());
    queue_.pop_front();
    return n;
  }

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

// Shrinks each group's smallest drawn failure on its backend; the smaller failure it finds, if any,
// becomes what the group shows first.
// The capability path a case of dtype t took on a device with `caps` (Problem::fallback_paths), or
// nullptr where the dtype has no choice of paths.
const char* capability_path(const std::vector<std::string>& caps, DType t, bool fallback) {
  auto has = [&](const char* word) { return std::find(caps.begin(), caps.end(), word) != caps.end(); };
  if (t == DType::i8) return has("int8-dot-product") && !fallback ? "int8 dot product" : "int8 scalar";
  if (t == DType::f16) return has("f16-rte") && !fallback ? "float16 stores by f16-rte" : "float16 stores rounded in integers";
  return nullptr;
}

void shrink_groups(CheckRun& run, const CheckOptions& o, const InterruptGuard& guard) {
  for (Group& g : run.groups) {
    if (!g.smallest_drawn || !g.slot->backend || guard.signal()) continue;
    const Failure& start = *g.smallest_drawn;
    if (!o.quiet) std::fprintf(stderr, "  shrinking the smallest failure of %s...\n", g.name.c_str());
    Sweep sweep(*find_op(g.op), *parse_dtype(g.dtype), o.cases, o.seed);
    auto shrunk = shrink_failure(sweep, start.k, *g.slot->backend, start.outcome, ShrinkBudget{},
                                 [&] { return guard.signal() != 0; });
    if (!shrunk) continue;
    Failure f;
    CaseNote note{g.name, -1, Mark::none, nullptr, true, shrunk->elements, o.backends.kernels.dir};
    f.json = case_json(shrunk->result, note);
    f.outcome = shrunk->result.outcome, f.id = shrunk->result.id, f.detail = shrunk->result.detail;
    f.elements = shrunk->elements;
    f.shrunk_from = start.id;
    f.shrink_steps = shrunk->steps;
    if (!g.smallest || f.smaller_than(*g.smallest)) g.smallest = std::move(f);
  }
}

}  // namespace

struct CheckStart {
  std::vector<RunSweep> sweeps;
  std::deque<EarlyCases> early;  // those of sweeps [0, early.size())
  // Where the edge cases are prepared early: on 8 or more cores, every sweep's from the start.
  std::unique_ptr<TaskPool> edges;

  CheckStart(const CheckOptions& o, const SweepPlan& plan, const Match& match) {
    for (auto& [op, dtypes] : plan)
      for (DType t : dtypes) {
        const uint64_t first = sweeps.empty() ? 0 : sweeps.back().first + uint64_t(sweeps.back().sweep->size());
        sweeps.push_back({std::make_unique<Sweep>(*op, t, o.cases, o.seed), first});
      }
    if (check_cores() >= 8) edges = std::make_unique<TaskPool>(check_cores());
    start_through(o, match, large_ahead());
  }
  // Starts preparing the early cases of sweeps up to `through`.
  void start_through(const CheckOptions& o, const Match& match, size_t through) {
    while (early.size() <= through && early.size() < sweeps.size()) {
      const RunSweep& s = sweeps[early.size()];
      early.push_back(start_early(*s.sweep, s.first, o, match, edges.get()));
    }
  }
};

void CheckStartDeleter::operator()(CheckStart* s) const { delete s; }

void for_each_case(const CheckOptions& o, const SweepPlan& plan,
                   const std::function<void(uint64_t, const OpDef&, DType, const std::string&)>& f) {
  const auto match = match_regex(o.match);
  uint64_t index = 0;
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      Sweep sweep(*op, t, o.cases, o.seed);
      for (int64_t k = 0; k < sweep.size(); ++k) {
        const uint64_t position = index++;
        if (position % o.shards != o.shard) continue;
        const std::string id = sweep.at(k).id();
        if (match && !match->search(id)) continue;
        f(position, *op, t, id);
      }
    }
}

std::unique_ptr<CheckStart, CheckStartDeleter> start_check(const CheckOptions& o) {
  return std::unique_ptr<CheckStart, CheckStartDeleter>(new CheckStart(o, sweep_plan(o), match_regex(o.match)));
}

SweepPlan sweep_plan(const CheckOptions& o) {
  std::vector<const OpDef*> ops;
  for (auto& n : o.ops) {
    const OpDef* op = find_op(n);
    if (!op) throw UsageError(cat("unknown operator '", n, "' (see touchstone list)"));
    ops.push_back(op);
  }
  const bool named_ops = !ops.empty();
  if (!named_ops) ops = all_ops();
  std::vector<DType> dtypes;
  for (auto& d : o.dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw UsageError(cat("unknown dtype '", d, "' (dtypes: float32, float16, bfloat16)"));
    dtypes.push_back(*t);
  }
  SweepPlan plan;
  for (const OpDef* op : ops) {
    std::vector<DType> mine;
    for (DType t : dtypes.empty() ? op->dtypes : dtypes) {
      const bool defined = std::find(op->dtypes.begin(), op->dtypes.end(), t) != op->dtypes.end();
      if (defined) mine.push_back(t);
      else if (named_ops)
        throw UsageError(cat("operator ", op->name, " does not define dtype ", dtype_name(t), " (its dtypes: ",
                             dtype_list(op->dtypes), ")"));
    }
    if (!mine.empty()) plan.push_back({op, mine});
  }
  for (DType t : dtypes)
    if (std::none_of(plan.begin(), plan.end(), [&](auto& p) {
          return std::find(p.second.begin(), p.second.end(), t) != p.second.end();
        }))
      throw UsageError(cat("no operator defines dtype ", dtype_name(t), " (see touchstone list)"));
  return plan;
}

int cmd_check(const CheckOptions& o) {
  const SweepPlan plan = sweep_plan(o);
  const auto match = match_regex(o.match);
  require_a_match(o, plan, match);
  if (o.list) {
    for (auto [name, file] : {std::pair{"--junit", &o.junit}, {"--json", &o.json}, {"--html", &o.html}})
      if (!file->empty()) throw UsageError(cat("--list runs nothing, so ", name, " would have nothing to report"));
    return list_cases(o, plan);
  }
  backend_names(o.backends);
  if (!o.xfail.empty()) {  // its usage errors before anything opens
    std::vector<std::array<std::string, 3>> groups;
    for (auto& [op, dtypes] : plan)
      for (DType t : dtypes)
        for (const std::string& b : backend_names(o.backends)) groups.push_back({op->name, b, std::string(dtype_name(t))});
    XfailList::load(o.xfail).require_reachable(groups);
  }
  if (!o.expect.empty()) DeviceProfile::load(o.expect);
  for (const std::string* out : {&o.junit, &o.json, &o.html})
    if (!out->empty()) check_output_path(*out);  // before minutes of sweeping, not after
  // The large cases' references are computed while the backends open (both take about a second).
  auto started = start_check(o);
  std::vector<BackendSlot> slots = open_backends(o.backends);
  if (int rc = report_backends(slots, " (see touchstone list)")) return rc;
  print_kernels(o.backends.kernels);
  return run_check(o, slots, started.get());
}

int run_check(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart* started) {
  std::unique_ptr<CheckStart, CheckStartDeleter> own;
  if (!started) started = (own = start_check(o)).get();
  CheckRun run;
  run.plan = sweep_plan(o);
  const auto match = match_regex(o.match);
  if (!o.xfail.empty()) run.xfail = XfailList::load(o.xfail);
  if (!o.expect.empty()) {
    run.expect = DeviceProfile::load(o.expect);
    if (int rc = check_capabilities(*run.expect, slots)) return rc;
  }
  const bool keep_json = !o.json.empty() || !o.html.empty();
  run.started = utc_now();

  std::optional<JUnitReport> junit;
  if (!o.junit.empty()) {
    junit.emplace(o.junit, [dir = o.backends.kernels.dir](const CaseResult& r) { return repro_line(r.id, r.backend, dir); });
    junit->mark_started("touchstone check");
  }
  std::optional<JsonReport> json;
  if (!o.json.empty()) {
    json.emplace(o.json);
    json->mark_started("touchstone check");
  }
  InterruptGuard guard;
  const auto t0 = std::chrono::steady_clock::now();
  long long positions = 0;
  for (auto& [op, dtypes] : run.plan) positions += (long long)dtypes.size() * o.cases;
  Progress progress((positions - o.shard + o.shards - 1) / o.shards, !o.quiet && ::isatty(2));
  long long done = 0, failing = 0;
  uint64_t index = 0;
  bool stopped = false;
  auto stop = [&](std::string state, std::string why) {
    stopped = true;
    run.state = std::move(state);
    run.stop_reason = std::move(why);
  };
  const std::vector<RunSweep>& sweeps = started->sweeps;
  std::atomic<bool> cancel{false};  // set when the run stops: queued judges return at once
  // Comparing took a large share of a lane's time on a GPU: it runs here, so a lane only calls its
  // backend. Declared before the lanes, which hand work to it, so it outlives them.
  TaskPool comparing(std::clamp(check_cores() / 2, 1u, 8u));
  Lanes lanes(slots.size());
  std::vector<std::vector<std::string>> capabilities(slots.size());  // each backend's, for the path coverage
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].backend) {
      lanes[s] = std::make_unique<TaskPool>(std::max(1u, slots[s].backend->concurrency()));
      capabilities[s] = slots[s].backend->info().capabilities;
    }
  unsigned threads = 1;  // the most threads a lane has
  for (auto& slot : slots)
    if (slot.backend) threads = std::max(threads, slot.backend->concurrency());
  const size_t in_flight = kInFlight * threads;
  WarmAhead warm(sweeps, o, match, slots, lanes);
  Judging judging{slots, lanes, comparing, cancel};
  std::deque<EarlyCases>& early = started->early;  // sweep j's and the next sweeps', started
  // A large case goes to the lanes as soon as they exist: a lane takes it when its inputs are made,
  // long before the tally reaches it (its run takes about a second, mostly packing 16M values).
  auto start_through = [&](size_t through) {
    started->start_through(o, match, through);
    for (EarlyCases& e : early)
      if (e.large && e.cases.at(*e.large).judged.empty()) judging.start(e.cases.at(*e.large));
  };
  for (size_t j = 0; j < sweeps.size() && !stopped; ++j) {
    const Sweep& sweep = *sweeps[j].sweep;
    const OpDef* op = &sweep.op();
    const DType t = sweep.dtype();
    const std::string label = cat(op->name, "/", dtype_name(t));
    start_through(j + large_ahead());
    EarlyCases cases = std::move(early[j]);
    early[j] = EarlyCases{};
    for (auto& cls : expected_classes(*op)) run.coverage[op->name][cls] += 0;
    const size_t first = run.groups.size();
    for (auto& s : slots) {
      Group g;
      g.name = cat(op->name, "/", s.name, "/", dtype_name(t));
      g.op = op->name, g.backend = s.name, g.dtype = dtype_name(t);
      g.slot = &s;
      g.pattern = run.xfail.pattern_for(g.op, g.backend, g.dtype);
      if (junit) {
        g.junit = junit->add_group(g.name);
        if (!s.backend) {
          CaseResult r;
          r.id = "backend unavailable";
          r.backend = s.name;
          r.outcome = Outcome::unsupported;
          r.detail = cat(s.name, " UNAVAILABLE on this machine: ", s.unavailable);
          junit->add(g.junit, r);
        }
      }
      run.groups.push_back(std::move(g));
    }
    auto last_progress = std::chrono::steady_clock::now();
    Lookahead ahead(sweep, o, match, index, std::move(cases));
    // Cases handed to the lanes and not yet tallied, in order: a lane runs up to in_flight cases
    // ahead of the tally, so one backend's slow case (a pipeline still compiling) does not hold the
    // other back. A judge holds its case's shared_future, not a reference.
    struct InFlight {
      int64_t k;
      uint64_t position;
      Prepared expected;
    };
    std::deque<InFlight> flight;
    std::optional<InFlight> deferred;
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
          progress.update(++done, failing);
          continue;
        }
        InFlight f{next->k, next->position, next->expected};
        if (f.expected.judged.empty()) judging.start(f.expected);  // a large case's were started with it
        flight.push_back(std::move(f));
      }
      // The sweep's large case is tallied last: its reference and its run (started when it was
      // launched) take seconds, and the tally would hold the lanes that long.
      if (flight.empty() && !deferred) break;
      InFlight current = std::move(flight.empty() ? *deferred : flight.front());
      if (flight.empty()) {
        deferred.reset();
      } else {
        flight.pop_front();
        if (current.k == sweep.large_index()) {
          deferred = std::move(current);
          continue;
        }
      }
      const int64_t k = current.k;
      const uint64_t position = current.position;
      progress.update(++done, failing);
      const Expected& e = [&]() -> const Expected& {
        Phase waiting("check: wait for the case's reference (prepared ahead)");
        current.expected.done.get();
        return *current.expected.e;
      }();
      const int64_t elements = input_elements(e);
      std::vector<std::shared_future<CaseResult>>& judged = current.expected.judged;
      for (size_t s = 0; s < slots.size() && !stopped; ++s) {
        if (!slots[s].backend) continue;
        CaseResult r = [&] {
          Phase waiting("check: wait for the case's judges (lanes, comparing)");
          return judged[s].get();
        }();
        if (guard.signal()) {  // the case may have been disturbed (a worker got the signal too)
          stopped = true;
          break;
        }
        Group& g = run.groups[first + s];
        const XfailEntry* listed = nullptr;
        if (!run.xfail.empty()) {
          listed = run.xfail.case_entry(r.id, r.backend);
          if (!listed) listed = g.pattern;
        }
        Mark mark = mark_of(r.outcome, listed);
        if (r.outcome == Outcome::unsupported && run.expect && run.expect->requires_capability(r.backend, r.capability)) {
          mark = Mark::unexpected_unsupported;
          if (g.unexpected.size() < CheckRun::kShownPerGroup) g.unexpected.push_back({r.id, r.capability, r.detail});
        }
        g.tally.add(r.outcome, mark, r.worst, r.seconds);
        ++run.runs;
        // A foreign backend runs a library's kernels, whose paths are not the plan's.
        const bool own_kernels = std::find(kernel_backends().begin(), kernel_backends().end(), r.backend) != kernel_backends().end();
        if (own_kernels && r.outcome != Outcome::rejected && r.outcome != Outcome::unsupported)
          if (const char* path = capability_path(capabilities[s], t, e.problem.fallback_paths)) run.paths[r.backend][path]++;
        const bool unexpected = mark == Mark::none && is_failure(r.outcome);
        failing += unexpected || mark == Mark::xpass || mark == Mark::unexpected_unsupported;
        if (junit) junit->add(g.junit, r, mark, listed);
        const bool shown = is_failure(r.outcome) && g.shown.size() < CheckRun::kShownPerGroup;
        nlohmann::json cj;
        if (keep_json) {
          cj = case_json(r, CaseNote{g.name, int64_t(position), mark, listed, shown, elements, o.backends.kernels.dir});
          if (json) json->add(cj);
          if (shown && !o.html.empty()) g.shown.push_back(cj);
        }
        if (unexpected) {
          Failure f{{}, r.outcome, r.id, r.detail, elements, k, sweep.draw(k).has_value(), "", 0};
          if (f.drawn && (!g.smallest_drawn || f.smaller_than(*g.smallest_drawn))) g.smallest_drawn = f;
          if (!g.smallest || f.smaller_than(*g.smallest)) {
            f.json = keep_json && shown ? std::move(cj) : case_json(r, CaseNote{g.name, int64_t(position), mark, listed, true, elements, o.backends.kernels.dir});
            g.smallest = std::move(f);
          }
        }
        if (mark == Mark::xpass && g.xpassed.size() < CheckRun::kShownPerGroup) g.xpassed.push_back({r.id, listed});
        if (o.fail_fast && (unexpected || mark == Mark::xpass || mark == Mark::unexpected_unsupported))
          stop("stopped", cat("--fail-fast: stopped after the first failure (", status_name(r.outcome, mark), " ",
                              r.id, " on ", r.backend, ")"));
      }
      if (guard.signal()) stopped = true;
      if (stopped && guard.signal()) break;
      for (auto& cls : *current.expected.classes) run.coverage[op->name][cls]++;
      run.coverage[op->name][cat("dtype ", dtype_name(t))]++;
      if (!o.quiet && !progress.enabled() && since(last_progress) >= kProgressSeconds) {
        last_progress = std::chrono::steady_clock::now();
        std::fprintf(stderr, "  %-32s %lld of %lld cases...\n", label.c_str(), (long long)k + 1,
                     (long long)sweep.size());
      }
    }
    cancel = stopped;  // judges still queued for the cases past the stop do nothing
    if (!o.quiet) {
      progress.clear();
      for (size_t s = first; s < run.groups.size(); ++s)
        if (run.groups[s].slot->backend)
          std::fprintf(stderr, "  %-32s %4lld cases  %.2fs\n", run.groups[s].name.c_str(), run.groups[s].tally.cases,
                       run.groups[s].tally.seconds);
    }
  }
  progress.clear();
  for (auto& lane : lanes)
    if (lane) lane->drain();  // compiles handed ahead: shrinking calls the backends from this thread
  shrink_groups(run, o, guard);  // does nothing once a signal came
  const int sig = guard.signal();
  if (sig) stop("interrupted", cat("interrupted by ", signal_name(sig), " after ", run.runs, " case runs"));
  run.seconds = since(t0);
  // A pattern is stale when its group ran whole without a failure; a shard sees part of the group,
  // so merge decides it there.
  for (Group& g : run.groups)
    if (g.pattern && g.slot->backend && o.shards == 1 && run.state == "complete") g.pattern_stale = g.tally.pattern_stale();

  const bool reports = junit || json;
  print_summary(o, run, slots, reports);
  bool bad = run.state == "stopped";
  for (const Group& g : run.groups) bad |= g.bad();

  if (junit) {
    for (const Group& g : run.groups)
      if (g.pattern_stale.value_or(false))
        junit->add_notice(g.junit, cat("xfail ", g.pattern->entry), "XPASS",
                          cat("listed as a known failure at ", g.pattern->where, " (", g.pattern->reason, ") but ",
                              g.name, " ran ", g.tally.cases, " cases without a failure"));
    junit->finish(run.state == "complete" ? "" : cat("touchstone check: ", run.stop_reason, ": this report is partial"),
                  run.state);
  }
  if (json || !o.html.empty()) {
    const nlohmann::json head = run_head(o, run, slots);
    if (json) json->finish(head);
    if (!o.html.empty()) {
      std::vector<nlohmann::json> shown;
      for (const Group& g : run.groups) shown.insert(shown.end(), g.shown.begin(), g.shown.end());
      write_html(o.html, head, shown);
    }
  }
  if (sig) {
    std::fprintf(stderr, "touchstone check: interrupted by %s after %lld case runs; %s\n", signal_name(sig), run.runs,
                 reports ? "the partial reports, marked interrupted, are written" : "results above are partial");
    return 128 + sig;
  }
  return bad ? 1 : 0;
}

}  // namespace ts
