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
        CaseResult r = judge(e, backend);
        if (r.outcome != want) continue;
        ++steps;
        best = Shrunk{std::move(r), input_elements(e), steps, tries};
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
