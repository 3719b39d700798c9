#pragma once
// The loop every broken-kernel proof runs: a property over drawn cases fails on the broken kernel,
// RapidCheck shrinks it, and the printed id of the smallest failure reproduces it on its own.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>
#include <string>

#include "core/backend.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"

namespace ts::test {

// Runs a property over drawn cases of `gen` against `b` until one does not pass, lets RapidCheck
// shrink it, and returns the id of the last failing case (the minimal counterexample); empty: never
// failed in 500 cases. `restorage`, when given, places every drawn case in that storage (a layout
// bug needs its layout); `seed` is RapidCheck's.
inline std::string shrunk_failure(Backend& b, const rc::Gen<Case>& gen, const std::string& restorage = "", uint64_t seed = 42) {
  std::string last_failing;
  auto property = [&] {
    Case c = *gen;
    if (!restorage.empty()) c.storage = restorage;
    CaseResult r = judge(prepare(c), b);
    if (lacks_capability(r, b)) return;  // tensor cores where the device has none: no failure of the bug's
    if (r.outcome != Outcome::pass) last_failing = c.id();
    RC_LOG() << "touchstone repro '" << c.id() << "' --backend " << b.kind() << "\n";
    RC_ASSERT(r.outcome == Outcome::pass);
  };
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = 500;
  rc::detail::TestResult result = rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params);
  rc::detail::FailureResult failure;
  return result.match(failure) ? last_failing : "";
}

// The printed id reproduces: the same failure from the id alone, the same output bytes twice.
inline void expect_reproduces(const std::string& id, Backend& b) {
  CaseResult again = judge(prepare(Case::parse(id)), b);
  CaseResult third = judge(prepare(Case::parse(id)), b);
  EXPECT_EQ(again.outcome, Outcome::fail) << id << ": " << again.detail;
  EXPECT_EQ(again.digests, third.digests) << id;
  std::cout << "shrunk to: touchstone repro '" << id << "' --backend " << b.kind() << "\n";
}

}  // namespace ts::test
