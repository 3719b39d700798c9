#pragma once
// The committed golden set, computed from the references: a few small valid cases per operator and
// dtype, and one rejected case per contract rule, operator and dtype.
#include <string>
#include <utility>
#include <vector>

#include "goldens/format.h"

namespace ts {

inline constexpr std::string_view kReferenceSource = "touchstone reference (float64 Eigen)";

// One case as a golden: inputs from op->make, expected outputs and tolerance from the reference,
// or expect = reject when the contract rejects it. Throws UsageError if the case cannot be built.
Golden golden_from_case(const Case& c);

// The committed set as (file name, golden), in file name order. Throws std::runtime_error naming
// any contract rule that no edge case (and no derived input) breaks.
std::vector<std::pair<std::string, Golden>> golden_set();

struct RegenSummary {
  size_t files = 0, changed = 0, removed = 0, bytes = 0;
};

// Rewrites `dir` with golden_set() and its MANIFEST.json. All files are computed and written to
// temporary names first; only then are they renamed into place (the manifest last) and the golden
// files no longer in the set removed, so an interrupted regen leaves the previous set readable.
RegenSummary regenerate(const std::string& dir);

}  // namespace ts
