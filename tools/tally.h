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

// unexpected_unsupported: UNSUPPORTED for a capability the device profile (check --expect,
// tools/device_profile.h) requires; it fails the gate, and no known-failure list excuses it.
enum class Mark { none, xfail, xpass, unexpected_unsupported };

// The status a report shows: "XFAIL" / "XPASS" / "UNEXPECTED_UNSUPPORTED" when marked, else the
// outcome's name.
std::string status_name(Outcome o, Mark m);
// The inverse for a report's status and outcome (merge): the mark the status says.
Mark parse_mark(std::string_view status);

struct Tally {
  // Every case is counted once: a failing case named by the known-failure list in `xfail` (not in
  // fail/error/mismatch), a passing one it names in `xpass` (not in pass/rejected), an
  // UNEXPECTED_UNSUPPORTED one in `unexpected_unsupported` (not in unsupported).
  long long cases = 0, pass = 0, fail = 0, rejected = 0, unsupported = 0, error = 0, mismatch = 0, xfail = 0, xpass = 0;
  long long unexpected_unsupported = 0;
  double worst = 0;    // max error / tolerance over the passing cases
  double seconds = 0;

  void add(Outcome o, Mark m, double worst_of_case, double seconds_of_case);
  void add(const Tally& t);
  long long failing() const { return fail + error + mismatch; }  // the unexpected failures
  bool bad() const { return failing() || xpass || unexpected_unsupported; }
  // A group a known-failure pattern names, that ran cases and had no failure at all: the pattern
  // is stale (XPASS). Decided over the whole sweep: by check unsharded, by merge otherwise.
  bool pattern_stale() const {
    return cases > unsupported + unexpected_unsupported && failing() == 0 && xfail == 0;
  }
};

}  // namespace ts
