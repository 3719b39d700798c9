#include "tools/device_profile.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/contract.h"
#include "core/errors.h"
#include "goldens/files.h"
#include "tools/backends.h"

namespace ts {

const std::map<std::string, std::string_view>& embedded_profiles();  // ci/profiles/*.json (CMakeLists.txt)

namespace {

constexpr std::string_view kDir = "ci/profiles/", kExt = ".json";
constexpr uint64_t kMaxProfileBytes = 1 << 20;

std::string name_of(const std::string& path) {
  return path.substr(kDir.size(), path.size() - kDir.size() - kExt.size());
}

}  // namespace

std::vector<std::string> DeviceProfile::built_in() {
  std::vector<std::string> names;
  for (auto& [path, text] : embedded_profiles()) names.push_back(name_of(path));
  return names;
}

DeviceProfile DeviceProfile::load(const std::string& name_or_path) {
  if (name_or_path.empty()) throw UsageError("--expect: an empty profile name");
  const bool path = name_or_path.find('/') != std::string::npos ||
                    (name_or_path.size() > kExt.size() && name_or_path.ends_with(kExt));
  if (!path) {
    const std::string file = cat(kDir, name_or_path, kExt);
    auto it = embedded_profiles().find(file);
    if (it == embedded_profiles().end()) {
      std::string names;
      for (const std::string& n : built_in()) names += cat(names.empty() ? "" : ", ", n);
      throw UsageError(cat("--expect ", name_or_path, ": no such built-in profile (", names,
                           "); give a file as a path (with a '/' or ending in .json)"));
    }
    return parse(it->second, cat(file, " (built in)"));
  }
  std::string text;
  try {
    text = read_file(name_or_path, kMaxProfileBytes);
  } catch (const std::exception& e) {
    throw UsageError(cat("--expect ", name_or_path, ": ", e.what()));
  }
  return parse(text, name_or_path);
}

DeviceProfile DeviceProfile::parse(std::string_view text, const std::string& source) {
  auto bad = [&](const std::string& why) { return UsageError(cat("--expect ", source, ": ", why)); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw bad(cat("not JSON: ", e.what()));
  }
  if (!j.is_object()) throw bad("not a profile (a JSON object with \"profile\" and \"backends\")");
  for (auto& [key, v] : j.items())
    if (key != "profile" && key != "about" && key != "backends")
      throw bad(cat("unknown key \"", key, "\" (a profile has \"profile\", \"about\" and \"backends\")"));
  if (!j.contains("profile") || !j["profile"].is_string() || j["profile"].get<std::string>().empty())
    throw bad("\"profile\" must be a non-empty string, the profile's name");
  if (j.contains("about") && !j["about"].is_string()) throw bad("\"about\" must be a string");
  if (!j.contains("backends") || !j["backends"].is_object() || j["backends"].empty())
    throw bad("\"backends\" must be an object mapping backends to the capability words they require");
  DeviceProfile p;
  p.name = j["profile"];
  p.source = source;
  const auto& known = known_backends();
  for (auto& [backend, words] : j["backends"].items()) {
    if (std::find(known.begin(), known.end(), backend) == known.end())
      throw bad(cat("unknown backend \"", backend, "\" (vulkan, webgpu)"));
    if (!words.is_array()) throw bad(cat("backends.", backend, " must be an array of capability words"));
    std::set<std::string> seen;
    std::vector<std::string>& need = p.require[backend];
    for (const auto& w : words) {
      if (!w.is_string() || w.get<std::string>().empty())
        throw bad(cat("backends.", backend, ": ", w.dump(), " is not a capability word (see touchstone list)"));
      if (!seen.insert(w.get<std::string>()).second)
        throw bad(cat("backends.", backend, ": \"", w.get<std::string>(), "\" is given twice"));
      need.push_back(w);
    }
  }
  return p;
}

std::vector<std::string> DeviceProfile::missing(const std::string& backend, const std::vector<std::string>& have) const {
  std::vector<std::string> out;
  auto it = require.find(backend);
  if (it == require.end()) return out;
  for (const std::string& w : it->second)
    if (std::find(have.begin(), have.end(), w) == have.end()) out.push_back(w);
  return out;
}

int check_capabilities(const DeviceProfile& p, const std::vector<BackendSlot>& slots) {
  std::printf("expect: device profile %s (%s)\n", p.name.c_str(), p.source.c_str());
  std::fflush(stdout);
  int rc = 0;
  for (const BackendSlot& s : slots) {
    if (!s.backend) continue;
    const DeviceInfo info = s.backend->info();
    for (const std::string& w : p.missing(s.name, info.capabilities)) {
      std::fprintf(stderr,
                   "error: backend %s (%s) lacks capability %s, which device profile %s (%s) requires; "
                   "`touchstone list` shows what it has\n",
                   s.name.c_str(), info.name.c_str(), w.c_str(), p.name.c_str(), p.source.c_str());
      rc = 2;
    }
  }
  return rc;
}

bool DeviceProfile::requires_capability(const std::string& backend, const std::string& capability) const {
  auto it = require.find(backend);
  return !capability.empty() && it != require.end() &&
         std::find(it->second.begin(), it->second.end(), capability) != it->second.end();
}

}  // namespace ts
