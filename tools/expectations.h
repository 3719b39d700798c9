#pragma once
// What a check run expects of its results, and what it makes of them: the known failures of
// --xfail FILE (tools/xfail.h) and the capabilities --expect PROFILE requires (tools/device_profile.h).
// The first stage of the pipeline (tools/check_pipeline.h): each result gets its mark (XFAIL,
// XPASS, UNEXPECTED_UNSUPPORTED) before anything records or reports it; a group keeps the cases
// the summary shows for them; once the run saw whole groups, a pattern whose group passed is stale.
#include "core/runner.h"
#include "tools/check_run.h"

namespace ts {

class Expectations {
 public:
  explicit Expectations(CheckRun& run) : run_(run) {}

  void assign(Group& g) const;  // the known-failure pattern naming a new group

  struct Marked {
    Mark mark = Mark::none;
    const XfailEntry* listed = nullptr;  // the entry naming the case: its case entry, else the group's pattern
  };
  // r's mark in group g; the group keeps its first XPASS and UNEXPECTED_UNSUPPORTED cases.
  Marked judge(const CaseResult& r, Group& g) const;

  // After the run: a pattern is stale when its group ran whole without a failure. A shard sees part
  // of each group, so merge decides it there; a run that stopped early decides nothing.
  void settle(const CheckOptions& o) const;

 private:
  CheckRun& run_;
};

}  // namespace ts
