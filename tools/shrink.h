#pragma once
// check shrinks what it finds: a failing case drawn from a generator is walked down RapidCheck's
// shrink tree of that very draw (the same tree a property test shrinks through, properties/), each
// step taken when the smaller case (no more input elements, then no longer an id) still fails on the
// same backend with the same outcome. The result is a case id that reproduces on its own, smaller
// than the sweep's first failure.
#include <chrono>
#include <functional>
#include <optional>

#include "core/backend.h"
#include "core/runner.h"
#include "tools/sweep.h"

namespace ts {

// The input elements of a case: what "smallest" compares (then the id's length).
int64_t input_elements(const Expected& e);

struct Shrunk {
  CaseResult result;    // of the smallest failing case found
  int64_t elements = 0;
  int steps = 0;        // shrink steps taken
  int tries = 0;        // cases run while shrinking
};

// A few seconds per group: shrinking stops after `max_tries` cases or `max_seconds`, keeping the
// smallest failure so far. 
struct ShrinkBudget {
  int max_tries = 150;
  double max_seconds = 20;
};

// Shrinks drawn case k of `sweep`, which failed on `backend` with `want`. None when case k is not
// drawn (an edge case) or no smaller case fails the same way. `stop` (a signal) ends it early.
std::optional<Shrunk> shrink_failure(const Sweep& sweep, int64_t k, Backend& backend, Outcome want,
                                     const ShrinkBudget& budget, const std::function<bool()>& stop);

}  // namespace ts
