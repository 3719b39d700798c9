#include "tools/expectations.h"

namespace ts {

void Expectations::assign(Group& g) const { g.pattern = run_.xfail.pattern_for(g.op, g.backend, g.dtype); }

Expectations::Marked Expectations::judge(const CaseResult& r, Group& g) const {
  Marked m;
  if (!run_.xfail.empty()) {
    m.listed = run_.xfail.case_entry(r.id, r.backend);
    if (!m.listed) m.listed = g.pattern;
  }
  m.mark = mark_of(r.outcome, m.listed);
  if (r.outcome == Outcome::unsupported && run_.expect && run_.expect->requires_capability(r.backend, r.capability)) {
    m.mark = Mark::unexpected_unsupported;
    if (g.unexpected.size() < CheckRun::kShownPerGroup) g.unexpected.push_back({r.id, r.capability, r.detail});
  }
  if (m.mark == Mark::xpass && g.xpassed.size() < CheckRun::kShownPerGroup) g.xpassed.push_back({r.id, m.listed});
  return m;
}

void Expectations::settle(const CheckOptions& o) const {
  for (Group& g : run_.groups)
    if (g.pattern && g.slot->backend && o.shards == 1 && run_.state == "complete") g.pattern_stale = g.tally.pattern_stale();
}

}  // namespace ts
