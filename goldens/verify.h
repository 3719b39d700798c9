#pragma once
// Verifying golden files, ours or another tool's: the reference must still reproduce each file and
// every backend must match it (SPEC "Golden files"). Backends are judged by ts::judge against an
// Expected built from the file, so goldens and `check` compare in exactly the same way.
#include <string>
#include <vector>

#include "core/runner.h"
#include "goldens/format.h"

namespace ts {

struct GoldenCheck {
  std::string file;
  std::string error;   // unreadable, malformed, or not fitting its operator: nothing else is set
  Golden golden;
  Expected expected;   // the file's problem and outputs; for expect = reject, the reference's rule
  CaseResult reference;  // whether the reference reproduces the file (backend "reference")
};

// Reads and checks one file against the reference; a bad file is reported in `error`, never thrown.
GoldenCheck check_golden(const std::string& path);

// One backend against a checked file (which must have no error); the result's id is the file.
CaseResult judge_golden(const GoldenCheck& g, Backend& backend);

// The *.safetensors files of a directory, sorted; throws UsageError if it cannot be listed.
std::vector<std::string> golden_files(const std::string& dir);

// Problems `dir` has against its MANIFEST.json: a regen that never finished (kRegenMarkerName),
// stale reference sources, and for the named files (every file if `only` is empty) edits by hand,
// missing or unreadable files, unlisted files. Without a manifest: none for named files (another
// tool's goldens have none), one for the whole directory (`only` empty), which is verified as a
// set only against a manifest.
std::vector<std::string> verify_manifest(const std::string& dir, const std::vector<std::string>& only);

}  // namespace ts
