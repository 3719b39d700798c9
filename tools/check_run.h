#pragma once
// What `touchstone check` keeps of a sweep while it runs, and reports at the end: per
// op/backend/dtype group a tally, its smallest failure (then shrunk) and the cases the summary
// shows; the coverage of shape classes; how the run ended. Cases themselves are made, judged and
// forgotten one at a time (the JSON and JUnit reports stream them to temporary files).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/linear_regex.h"
#include "core/op.h"
#include "tools/backends.h"
#include "tools/device_profile.h"
#include "tools/options.h"
#include "tools/tally.h"
#include "tools/xfail.h"

namespace ts {

// The operators and, per operator, the dtypes a check sweeps; every usage error about them is
// found here, before a backend opens.
using SweepPlan = std::vector<std::pair<const OpDef*, std::vector<DType>>>;
SweepPlan sweep_plan(const CheckOptions& o);

// check --match: the pattern a case id must contain a match of; none: every case.
using Match = std::optional<LinearRegex>;
Match match_regex(const std::string& pattern);

// Each case shard o.shard/o.shards of the sweep runs, after --match, in sweep order: its position
// in the whole sweep (the report's `index`), its operator, dtype and id. What `check --list` prints,
// and what `merge` requires each shard's report to hold.
void for_each_case(const CheckOptions& o, const SweepPlan& plan,
                   const std::function<void(uint64_t position, const OpDef& op, DType dtype, const std::string& id)>& f);

// The failure a group shows first: its smallest (fewest input elements, then shortest id).
struct Failure {
  nlohmann::json json;      // the case as the JSON report holds it (with error maps)
  Outcome outcome = Outcome::fail;
  std::string id, detail;
  int64_t elements = 0;
  int64_t k = -1;           // position in its op/dtype sweep; -1 for a case found by shrinking
  bool drawn = false;       // drawn from a generator (so it can be shrunk), not a hand-picked edge case
  std::string shrunk_from;  // the id shrinking started from
  int shrink_steps = 0;

  bool smaller_than(const Failure& o) const {
    return elements != o.elements ? elements < o.elements : id.size() < o.id.size();
  }
};

struct Group {
  std::string name, op, backend, dtype;  // name: "op/backend/dtype"
  const BackendSlot* slot = nullptr;
  Tally tally;
  const XfailEntry* pattern = nullptr;          // the known-failure pattern naming this group
  std::optional<bool> pattern_stale;            // decided when the run saw the whole group
  std::optional<Failure> smallest;              // of the unexpected failures
  std::optional<Failure> smallest_drawn;        // where shrinking starts
  // Failing cases so far: the first kShownPerGroup carry error maps in the reports (tools/check_pipeline.h).
  long long failures_seen = 0;
  std::vector<std::pair<std::string, const XfailEntry*>> xpassed;  // case ids (at most kShownPerGroup)
  // UNEXPECTED_UNSUPPORTED cases (at most kShownPerGroup): id, the capability, the detail.
  struct Unexpected {
    std::string id, capability, detail;
  };
  std::vector<Unexpected> unexpected;

  bool bad() const { return tally.bad() || pattern_stale.value_or(false); }
};

struct CheckRun {
  static constexpr size_t kShownPerGroup = 10;
  SweepPlan plan;
  std::vector<Group> groups;
  std::map<std::string, std::map<std::string, long long>> coverage;  // op -> class -> cases
  // backend -> capability path -> cases that ran on it (Problem::fallback_paths: both where the
  // device has the faster path)
  std::map<std::string, std::map<std::string, long long>> paths;
  KernelUse user_kernels;  // --kernels: the cases that ran each of the user's files
  long long runs = 0;
  double seconds = 0;
  std::string started;            // UTC
  std::string state = "complete";  // or "stopped" (--fail-fast) or "interrupted" (a signal)
  std::string stop_reason;        // one line, when not complete
  XfailList xfail;
  std::optional<DeviceProfile> expect;  // check --expect
};

// The sweeps of a run, with their first large cases being prepared (tools/check_prepare.h): cmd_check starts
// them before it opens the backends.
struct CheckStart;
struct CheckStartDeleter {
  void operator()(CheckStart* s) const;
};
std::unique_ptr<CheckStart, CheckStartDeleter> start_check(const CheckOptions& o);

// Runs the sweep of `o` on `slots` (opened by cmd_check, or by a test with its own backends):
// prints the table, coverage and failures, writes the reports, returns the exit code. `started`:
// start_check(o)'s, or null.
int run_check(const CheckOptions& o, std::vector<BackendSlot>& slots, CheckStart* started = nullptr);

// The JSON report's head (everything but the cases) of a run.
nlohmann::json run_head(const CheckOptions& o, const CheckRun& run, const std::vector<BackendSlot>& slots);
// The plan as the report's "sweep" records it (what merge compares across shards).
nlohmann::json sweep_json(const CheckOptions& o, const SweepPlan& plan);
nlohmann::json group_json(const Group& g);

// The console summary: table, coverage, smallest failure per group, XPASS cases, warnings.
void print_summary(const CheckOptions& o, const CheckRun& run, const std::vector<BackendSlot>& slots, bool reports);

}  // namespace ts
