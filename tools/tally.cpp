#include "tools/tally.h"

#include <algorithm>

namespace ts {

bool is_failure(Outcome o) { return o != Outcome::pass && o != Outcome::rejected && o != Outcome::unsupported; }

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (Outcome o : {Outcome::pass, Outcome::fail, Outcome::rejected, Outcome::unexpected_reject, Outcome::missed_reject,
                    Outcome::unsupported, Outcome::error})
    if (outcome_name(o) == name) return o;
  return std::nullopt;
}

std::string status_name(Outcome o, Mark m) {
  if (m == Mark::xfail) return "XFAIL";
  if (m == Mark::xpass) return "XPASS";
  if (m == Mark::unexpected_unsupported) return "UNEXPECTED_UNSUPPORTED";
  return std::string(outcome_name(o));
}

Mark parse_mark(std::string_view status) {
  for (Mark m : {Mark::xfail, Mark::xpass, Mark::unexpected_unsupported})
    if (status_name(Outcome::pass, m) == status) return m;
  return Mark::none;
}

void Tally::add(Outcome o, Mark m, double worst_of_case, double seconds_of_case) {
  ++cases;
  seconds += seconds_of_case;
  if (m == Mark::xfail) {
    ++xfail;
    return;
  }
  if (m == Mark::xpass) {
    ++xpass;
    return;
  }
  if (m == Mark::unexpected_unsupported) {
    ++unexpected_unsupported;
    return;
  }
  switch (o) {
    case Outcome::pass: ++pass; worst = std::max(worst, worst_of_case); break;
    case Outcome::fail: ++fail; break;
    case Outcome::rejected: ++rejected; break;
    case Outcome::unsupported: ++unsupported; break;
    case Outcome::error: ++error; break;
    default: ++mismatch; break;  // UNEXPECTED_REJECT / MISSED_REJECT
  }
}

void Tally::add(const Tally& t) {
  cases += t.cases, pass += t.pass, fail += t.fail, rejected += t.rejected, unsupported += t.unsupported;
  error += t.error, mismatch += t.mismatch, xfail += t.xfail, xpass += t.xpass;
  unexpected_unsupported += t.unexpected_unsupported;
  worst = std::max(worst, t.worst);
  seconds += t.seconds;
}

}  // namespace ts
