#include "tools/check_prepare.h"

#include <algorithm>
#include <thread>

#include "core/profile.h"
#include "gpu/plans/coverage.h"
#include "tools/environment.h"

namespace ts {

unsigned check_cores() {
  if (const auto n = env_cores()) return *n;
  return std::max(1u, std::thread::hardware_concurrency());
}

Prepared launch(const OpDef& op, Case c, TaskPool* pool) {
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

size_t large_ahead() {
  const size_t cores = check_cores();
  return cores >= 8 ? SIZE_MAX / 2 : std::max<size_t>(1, cores / 2);
}

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

std::optional<Lookahead::Next> Lookahead::next() {
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

CheckStart::CheckStart(const CheckOptions& o, const SweepPlan& plan, const Match& match) {
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      const uint64_t first = sweeps.empty() ? 0 : sweeps.back().first + uint64_t(sweeps.back().sweep->size());
      sweeps.push_back({std::make_unique<Sweep>(*op, t, o.cases, o.seed), first});
    }
  if (check_cores() >= 8) edges = std::make_unique<TaskPool>(check_cores());
  start_through(o, match, large_ahead());
}

void CheckStart::start_through(const CheckOptions& o, const Match& match, size_t through) {
  while (early.size() <= through && early.size() < sweeps.size()) {
    const RunSweep& s = sweeps[early.size()];
    early.push_back(start_early(*s.sweep, s.first, o, match, edges.get()));
  }
}

void CheckStartDeleter::operator()(CheckStart* s) const { delete s; }

std::unique_ptr<CheckStart, CheckStartDeleter> start_check(const CheckOptions& o) {
  return std::unique_ptr<CheckStart, CheckStartDeleter>(new CheckStart(o, sweep_plan(o), match_regex(o.match)));
}

}  // namespace ts
