#include "tools/shrink.h"

#include <rapidcheck.h>

#include "gpu/plans/registry.h"

namespace ts {

int64_t input_elements(const Expected& e) {
  int64_t n = 0;
  for (auto& [name, t] : e.problem.inputs) n += t.numel();
  return n;
}

std::optional<Shrunk> shrink_failure(const Sweep& sweep, int64_t k, Backend& backend, Outcome want,
                                     const ShrinkBudget& budget, const std::function<bool()>& stop) {
  const std::optional<Draw> d = sweep.draw(k);
  if (!d) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  auto spent = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  rc::Shrinkable<Case> current = draw_shrinkable(sweep.op(), sweep.dtype(), *d);
  // A step never grows the case, as check orders failures (input elements, then the id's length):
  // a shrink of a choice (towards its first option) may draw a larger value than the one it replaces,
  // and a range shrunk towards its low end may turn a variable on (tables=random).
  std::pair<int64_t, size_t> size;
  try {
    const Expected start = prepare(current.value());
    size = {input_elements(start), start.c.id().size()};
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::optional<Shrunk> best;
  int tries = 0, steps = 0;
  for (bool stepped = true; stepped;) {
    stepped = false;
    auto shrinks = current.shrinks();
    while (auto next = shrinks.next()) {
      if (tries >= budget.max_tries || spent() > budget.max_seconds || (stop && stop())) break;
      ++tries;
      try {
        Expected e = prepare(next->value());
        const std::pair<int64_t, size_t> candidate{input_elements(e), e.c.id().size()};
        if (candidate > size) continue;
        CaseResult r = judge(e, backend);
        if (r.outcome != want) continue;
        ++steps;
        size = candidate;
        best = Shrunk{std::move(r), candidate.first, steps, tries};
        current = std::move(*next);
        stepped = true;
        break;
      } catch (const std::exception&) {
        continue;  // a candidate the generator or the declaration refuses is no counterexample
      }
    }
  }
  if (best) best->tries = tries;
  return best;
}

}  // namespace ts
