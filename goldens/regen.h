#pragma once
// The committed golden set, computed from the references: a few small valid cases per operator and
// dtype, and one rejected case per contract rule, operator and dtype.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "goldens/format.h"

namespace ts {

inline constexpr std::string_view kReferenceSource = "touchstone reference (float64 Eigen)";

// One case as a golden: inputs from op->make, expected outputs and tolerance from the reference,
// or expect = reject when the contract rejects it. Throws UsageError if the case cannot be built.
Golden golden_from_case(const Case& c);

// Largest inputs of a case in the committed set, which stays small enough to review and keep in
// git. A rule that only larger inputs break (a 32-bit index limit) is listed as uncovered instead.
inline constexpr size_t kMaxInputBytes = 32 * 1024;

struct GoldenSet {
  std::vector<std::pair<std::string, Golden>> files;  // (file name, golden), in file name order
  std::map<std::string, std::string> uncovered;       // "op/dtype/rule" -> why it has no golden
};

// The committed set. Throws std::runtime_error naming any contract rule that no edge case (and no
// derived input) breaks at all.
GoldenSet golden_set();

struct RegenSummary {
  size_t files = 0, changed = 0, removed = 0, bytes = 0;
  std::map<std::string, std::string> uncovered;
  std::vector<std::string> left_alone;  // *.safetensors in the directory that regen did not write
  // Files a previous manifest or in-progress marker names that regen left in place, since their
  // bytes are not the ones it wrote there (name -> why); they are among left_alone too.
  std::map<std::string, std::string> not_ours;
  std::vector<std::string> pass_cases;  // the case ids of the set's expect = pass goldens
};

// Rewrites `dir` with golden_set() and its MANIFEST.json, holding an exclusive lock on
// DIR/.regen.lock (a second regen of the same directory throws at once, naming the lock). All
// files are computed and written to temporary names first (removed again if anything fails); only
// then are they renamed into place, between writing and removing DIR/MANIFEST.in-progress (the
// manifest renamed last), so a regen killed midway leaves a marker that makes `verify --dir` fail.
// Removed afterwards: only files the previous manifest (or a killed regen's marker) listed that
// left the set, and of those only the ones whose sha256 is the one listed with them (the marker
// lists each file with the hashes it may have). Other *.safetensors (another tool's goldens, a
// listed file someone replaced) are never touched, only reported.
RegenSummary regenerate(const std::string& dir);

}  // namespace ts
