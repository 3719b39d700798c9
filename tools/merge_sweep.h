#pragma once
// What merge takes from a shard's report, and what it works out itself. A report's tallies, gate,
// groups, statuses and case list are claims; merge keeps only each case's outcome and recomputes
// the rest: the ids each shard must hold are regenerated from the sweep the reports state (op,
// dtype, --cases, --seed, --match, shard I/N, exactly as check drew them), and every status and
// tally from the outcomes and the --xfail list. A shard with a case removed, added, moved or
// renamed does not fit; one with a case turned into a FAIL fails the merge.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/check_run.h"
#include "tools/tally.h"
#include "tools/xfail.h"

namespace ts {

struct ShardReport {
  std::string file;
  nlohmann::json report;
  uint32_t shard = 0, shards = 1;
  std::vector<std::string> ran;  // backends that could run there (a device with a name)
};

// Reads `file` with the golden reader's limits (size, nesting) and checks the parts merge reads
// are there and of their kind, and that its shard is one: 0 <= index < count <= kMaxShards.
// std::runtime_error naming the file and what is wrong.
ShardReport read_shard(const std::string& file);

struct SweepCase {
  const OpDef* op = nullptr;
  DType dtype = DType::f32;
  std::string id;
};

// Every case of a sweep (all shards), by its position in the sweep (a case's `index`).
struct SweepCases {
  std::vector<uint64_t> positions;  // in sweep order; --match has dropped the rest
  std::unordered_map<uint64_t, SweepCase> at;
};

// The cases of the sweep a report's "sweep" object states; std::runtime_error naming `file` when
// it states no sweep this touchstone can draw (an unknown operator, a dtype it does not define,
// --cases out of range, a --match that is not a regex).
SweepCases regenerate_sweep(const nlohmann::json& sweep, const std::string& file);

// What does not fit in the inputs' cases, one line each: a case whose index the sweep does not run
// or runs with another id, one outside its file's shard, on a backend that did not run there,
// with an unknown outcome, or present twice; and per complete shard and backend that ran there,
// the cases missing (how many, and the first). Stopped or interrupted shards may lack cases: the
// merged run is then not complete, and its gate fails.
std::vector<std::string> case_problems(const std::vector<ShardReport>& in, const SweepCases& sweep);

// The --xfail list a report records, parsed again as a list file; std::runtime_error if it cannot be.
XfailList recorded_xfail(const nlohmann::json& xfail, const std::string& file);

// Rewrites each case's derived members (group, status, xfail entry, repro line) from its outcome,
// the sweep and `list`, and returns the tally of each group by name. Call after case_problems
// found nothing.
std::map<std::string, Tally> settle_cases(std::vector<ShardReport>& in, const SweepCases& sweep, const XfailList& list);

}  // namespace ts
