#pragma once
// Device profiles (check --expect PROFILE): the capabilities a device must have, per backend, in
// the words DeviceInfo::capabilities lists (`touchstone list`). Without one, a device (or a driver
// update, or a backend option) that loses float16 or subgroups turns whole sweeps UNSUPPORTED and
// the gate stays green. With one, a backend that lacks a required capability is a set-up error
// when it opens (exit 2), and a case UNSUPPORTED for a capability its backend's profile requires
// (RunOutput::capability) is UNEXPECTED_UNSUPPORTED and fails the run. An UNSUPPORTED for a limit (a
// shape past maxImageDimension3D) names no capability and stays UNSUPPORTED.
//
//   {"profile": "lavapipe", "about": "...", "backends": {"vulkan": ["shader-f16", ...], "webgpu": [...]}}
//
// The committed profiles, ci/profiles/NAME.json, are built in and named by NAME; any other is given
// as a path (one with a '/' or ending in .json).
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

struct DeviceProfile {
  std::string name;    // the file's "profile"
  std::string source;  // "ci/profiles/lavapipe.json (built in)", or the path given
  std::map<std::string, std::vector<std::string>> require;  // backend -> capability words

  // Usage errors (exit 2) name the file and what is wrong: an unknown name (listing the built-in
  // ones), a file that is not a profile, an unknown backend, an empty or repeated word.
  static DeviceProfile load(const std::string& name_or_path);
  static DeviceProfile parse(std::string_view text, const std::string& source);
  static std::vector<std::string> built_in();  // the names ci/profiles holds

  // The words `backend`'s entry requires that `have` (its DeviceInfo::capabilities) lacks.
  std::vector<std::string> missing(const std::string& backend, const std::vector<std::string>& have) const;
  // Whether `backend`'s entry requires `capability` ("" never is).
  bool requires_capability(const std::string& backend, const std::string& capability) const;
};

struct BackendSlot;
// Prints the profile in use; for each opened backend lacking what `p` requires for it, an error
// naming the backend, its device and each missing word: then returns 2 (a set-up error), else 0.
// A backend the profile does not name, or one that did not open, is not checked here.
int check_capabilities(const DeviceProfile& p, const std::vector<BackendSlot>& slots);

}  // namespace ts
