#pragma once
// What a sweep counts, shared by check, its reports and merge: each case's status (its outcome, or
// XFAIL / XPASS when a known-failure list names it, tools/xfail.h) and the tally of one
// op/backend/dtype group.
#include <optional>
#include <string>
#include <string_view>

#include "core/runner.h"

namespace ts {

// FAIL, ERROR, UNEXPECTED_REJECT, MISSED_REJECT: what fails the gate unless it is a known failure.
bool is_failure(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view name);  // the inverse of outcome_name

enum class Mark { none, xfail, xpass };

// The status a report shows: "XFAIL" / "XPASS" when marked, else the outcome's name.
std::string status_name(Outcome o, Mark m);

struct Tally {
  // Every case is counted once: a failing case named by the known-failure list in `xfail` (not in
  // fail/error/mismatch), a passing one it names in `xpass` (not in pass/rejected).
  long long cases = 0, pass = 0, fail = 0, rejected = 0, unsupported = 0, error = 0, mismatch = 0, xfail = 0, xpass = 0;
  double worst = 0;    // max error / tolerance over the passing cases
  double seconds = 0;

  void add(Outcome o, Mark m, double worst_of_case, double seconds_of_case);
  void add(const Tally& t);
  long long failing() const { return fail + error + mismatch; }  // the unexpected failures
  bool bad() const { return failing() || xpass; }
  // A group a known-failure pattern names, that ran cases and had no failure at all: the pattern
  // is stale (XPASS). Decided over the whole sweep: by check unsharded, by merge otherwise.
  bool pattern_stale() const { return cases > unsupported && failing() == 0 && xfail == 0; }
};

}  // namespace ts
