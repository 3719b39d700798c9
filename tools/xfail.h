#pragma once
// Known failures, the IREE way (check --xfail FILE): each line names a case or a group of cases
// that is expected to fail, and why. A listed case that fails is XFAIL and does not fail the gate;
// a listed case that passes is XPASS and does, so a list cannot keep an entry nobody needs.
//
//   <entry>  # <reason>          (the reason is required; '#' lines and blank lines are comments)
//
// An entry is
//  - a case id, `<op>/<k=v,...>/<dtype>/<storage>/seed=<n>`, optionally followed by a
//    backend name (the case on that backend alone, else on every backend): the case is XFAIL when it
//    fails (FAIL, ERROR, UNEXPECTED_REJECT, MISSED_REJECT) and XPASS when it passes (PASS, REJECTED);
//  - or `op/backend/dtype`, each part a name or `*`: every failing case of the groups it names is
//    XFAIL, and a group it names that ran cases without one failure is XPASS (decided over the
//    whole sweep: by `check` itself, or by `merge` when the sweep is sharded).
// UNSUPPORTED is neither. Entries are checked like command-line values: an unknown operator,
// backend or dtype, a malformed case id, a missing reason or an entry given twice is a usage error
// naming FILE:LINE, and so is a pattern that no group of the run fits (require_reachable).
#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/tally.h"

namespace ts {

struct XfailEntry {
  std::string entry;   // as written (a case id canonicalised)
  std::string reason;
  std::string where;   // "FILE:LINE"
  bool is_case = false;
  std::string backend;                    // case entries: "" = every backend
  std::string op, backend_part, dtype;    // pattern entries: a name or "*"
};

class XfailList {
 public:
  XfailList() = default;
  static XfailList load(const std::string& path);                      // UsageError
  static XfailList parse(std::string_view text, const std::string& source);

  bool empty() const { return entries_.empty(); }
  const std::vector<XfailEntry>& entries() const { return entries_; }

  // UsageError naming the first pattern entry that no group {op, backend, dtype} of `groups` fits:
  // it could never mark a case, which is most often a typo or a stale list.
  void require_reachable(const std::vector<std::array<std::string, 3>>& groups) const;

  // The pattern entry naming group op/backend/dtype (the first in the file), or null.
  const XfailEntry* pattern_for(std::string_view op, std::string_view backend, std::string_view dtype) const;
  // The case entry naming `id` (as Case::id() writes it) on `backend`, or null.
  const XfailEntry* case_entry(const std::string& id, std::string_view backend) const;

 private:
  std::vector<XfailEntry> entries_;
  std::unordered_multimap<std::string, size_t> by_id_;
};

// The mark a case gets from the entry that names it (its case entry, else its group's pattern).
Mark mark_of(Outcome o, const XfailEntry* e);

}  // namespace ts
