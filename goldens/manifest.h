#pragma once
// MANIFEST.json of a golden directory: the sha256 of every golden file regen wrote, and the sha256
// of the reference sources (embedded in the binary) that computed them. Verify uses it to tell a
// stale set (the references changed since regen) from a file edited by hand.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

inline constexpr std::string_view kManifestName = "MANIFEST.json";

// Present while a regen is renaming files into a directory: from before its first rename until its
// manifest is committed and the files that left the set are removed. Found later, it means a regen
// was killed midway and the directory mixes two sets, whatever its manifest says. It lists the
// files that regen was committing, one per line as `<sha256> <name>` (a name once per hash it may
// have), so the next regen knows them as its own: by content, not by name alone.
inline constexpr std::string_view kRegenMarkerName = "MANIFEST.in-progress";

// A manifest lists each file in about 100 bytes: 16 MiB is over 100,000 files, and bounds what
// parsing a hostile one costs (nlohmann holds about 10x the text).
inline constexpr uint64_t kMaxManifestBytes = uint64_t(16) << 20;

// Whether a name may appear in a manifest or marker: a plain `*.safetensors` file name, not hidden,
// without a directory part (regen removes listed files: a listed "../x" must never be one).
bool is_golden_file_name(std::string_view name);

struct Manifest {
  std::map<std::string, std::string> sources;  // source path -> sha256 of its text
  std::map<std::string, std::string> files;    // golden file name -> sha256 of its bytes
  std::map<std::string, std::string> uncovered;  // "op/dtype/rule" -> why no golden breaks it
};

// The sources that determine reference values, as embedded in this binary: reference/*.cpp,
// reference/*.h and core/{rng.h,tensor.cpp,half.cpp,case.cpp}, each with its sha256.
std::map<std::string, std::string> reference_sources();

// One hash over a path -> sha256 map: the sha256 of its `sha256sum`-style listing.
std::string combined_hash(const std::map<std::string, std::string>& hashes);

std::string serialize_manifest(const Manifest& m);                    // deterministic
Manifest parse_manifest(std::string_view text, const std::string& file);  // throws FormatError

// What is wrong with `dir` against its manifest, one line each: stale reference sources, files
// whose bytes changed, files missing, unreadable or not listed. `only` limits the file checks to
// those names (empty: every file of the directory).
std::vector<std::string> manifest_problems(const std::string& dir, const Manifest& m,
                                           const std::vector<std::string>& only);

}  // namespace ts
