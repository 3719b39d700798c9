#include "goldens/manifest.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/contract.h"
#include "goldens/files.h"
#include "goldens/json_read.h"
#include "goldens/safetensors.h"
#include "goldens/sha256.h"

namespace ts {

// The files CMakeLists.txt lists as deciding reference values, embedded by cmake/embed.cmake.
const std::map<std::string, std::string_view>& embedded_reference_sources();

namespace {

using json = nlohmann::json;
constexpr std::string_view kManifestFormat = "touchstone-golden-manifest/1";

bool ends_with(std::string_view s, std::string_view e) { return s.size() >= e.size() && s.substr(s.size() - e.size()) == e; }

// "core/tensor.cpp changed, reference/x.h added" for the difference between two source lists.
std::string source_changes(const std::map<std::string, std::string>& was, const std::map<std::string, std::string>& now) {
  std::vector<std::string> what;
  for (auto& [path, h] : now) {
    auto it = was.find(path);
    if (it == was.end()) what.push_back(path + " added");
    else if (it->second != h) what.push_back(path + " changed");
  }
  for (auto& [path, h] : was)
    if (!now.count(path)) what.push_back(path + " removed");
  std::string s;
  for (size_t i = 0; i < what.size() && i < 6; ++i) s += (i ? ", " : "") + what[i];
  if (what.size() > 6) s += cat(" and ", what.size() - 6, " more");
  return s;
}

}  // namespace

bool is_golden_file_name(std::string_view name) {
  return ends_with(name, ".safetensors") && name.size() > std::string_view(".safetensors").size() && name[0] != '.' &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

std::map<std::string, std::string> reference_sources() {
  std::map<std::string, std::string> out;
  for (auto& [path, text] : embedded_reference_sources()) out[path] = sha256_hex(text);
  return out;
}

std::string combined_hash(const std::map<std::string, std::string>& hashes) {
  std::string listing;
  for (auto& [path, h] : hashes) listing += h + "  " + path + "\n";
  return sha256_hex(listing);
}

std::string serialize_manifest(const Manifest& m) {
  json j = {{"format", kManifestFormat},
            {"reference_sources", {{"sha256", combined_hash(m.sources)}, {"files", m.sources}}},
            {"files", m.files},
            {"rules_without_golden", m.uncovered}};
  return j.dump(2) + "\n";
}

Manifest parse_manifest(std::string_view text, const std::string& file) {
  Manifest m;
  try {
    json j = parse_json_within_limits(text, file);
    if (j.at("format") != kManifestFormat) throw FormatError(cat(file, ": format is not ", kManifestFormat));
    m.sources = j.at("reference_sources").at("files").get<std::map<std::string, std::string>>();
    m.files = j.at("files").get<std::map<std::string, std::string>>();
    m.uncovered = j.at("rules_without_golden").get<std::map<std::string, std::string>>();
    if (j["reference_sources"].at("sha256") != combined_hash(m.sources))
      throw FormatError(cat(file, ": reference_sources.sha256 does not match its file list (edited by hand)"));
    for (auto& [name, _] : m.files)
      if (!is_golden_file_name(name))
        throw FormatError(cat(file, ": lists '", name, "', which is not a plain *.safetensors file name"));
  } catch (const json::exception& e) {
    throw FormatError(cat(file, ": not a golden manifest: ", e.what()));
  }
  return m;
}

std::vector<std::string> manifest_problems(const std::string& dir, const Manifest& m,
                                           const std::vector<std::string>& only) {
  namespace fs = std::filesystem;
  std::vector<std::string> problems;
  std::map<std::string, std::string> now = reference_sources();
  if (combined_hash(now) != combined_hash(m.sources))
    problems.push_back(cat("goldens are stale: reference sources changed since regen; run touchstone golden regen --dir ",
                           dir, " (", source_changes(m.sources, now), ")"));
  std::vector<std::string> names = only;
  if (names.empty()) {
    for (auto& [name, h] : m.files) names.push_back(name);
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".safetensors" && !m.files.count(e.path().filename().string()))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  for (const std::string& name : names) {
    std::string path = (fs::path(dir) / name).string();
    auto it = m.files.find(name);
    if (it == m.files.end()) {
      problems.push_back(cat(path, ": not listed in ", kManifestName,
                             ", so not part of the set golden regen wrote (regen leaves such files alone: keep "
                             "another tool's goldens in a directory of their own, or verify them by name)"));
      continue;
    }
    std::string bytes;
    try {
      bytes = read_file(path);
    } catch (const std::exception& e) {
      problems.push_back(describe_path(path).empty() ? cat(path, ": listed in ", kManifestName, " but missing") : e.what());
      continue;
    }
    if (sha256_hex(bytes) != it->second)
      problems.push_back(cat(path, ": sha256 differs from ", kManifestName,
                             ": edited by hand (restore it, or run touchstone golden regen)"));
  }
  return problems;
}

}  // namespace ts
