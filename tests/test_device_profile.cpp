// Device profiles (tools/device_profile.h): what a file may say, and what a backend then lacks.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "tools/device_profile.h"

namespace ts {
namespace {

std::string usage_error(const std::string& text) {
  try {
    DeviceProfile::parse(text, "p.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceProfile, TheCommittedProfilesAreBuiltInAndCoverBothBackends) {
  EXPECT_EQ(DeviceProfile::built_in(), (std::vector<std::string>{"lavapipe", "nvidia"}));
  for (const std::string& name : DeviceProfile::built_in()) {
    const DeviceProfile p = DeviceProfile::load(name);
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(p.source, "ci/profiles/" + name + ".json (built in)");
    for (const char* backend : {"vulkan", "webgpu"})
      for (const char* w : {"shader-f16", "bfloat16", "int8-dot-product", "subgroups", "texture3d:rgba16float"})
        EXPECT_TRUE(p.requires_capability(backend, w)) << name << " " << backend << " " << w;
  EXPECT_TRUE(DeviceProfile::load("nvidia").requires_capability("vulkan", "subgroup-size=32"));
  EXPECT_TRUE(DeviceProfile::load("lavapipe").requires_capability("webgpu", "subgroup-size=8..8"));
  }
}

TEST(DeviceProfile, MalformedProfilesAreUsageErrorsNamingTheProblem) {
  EXPECT_NE(usage_error("{").find("p.json: not JSON"), std::string::npos);
  EXPECT_NE(usage_error("[]").find("not a profile"), std::string::npos);
  EXPECT_NE(usage_error(R"({"backends": {"vulkan": []}})").find("\"profile\" must be"), std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x"})").find("\"backends\" must be"), std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x", "backends": {"metal": []}})").find("unknown backend \"metal\""),
            std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x", "backends": {"vulkan": "shader-f16"}})").find("must be an array"),
            std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x", "backends": {"vulkan": ["int8", "int8"]}})").find("\"int8\" is given twice"),
            std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x", "backends": {"vulkan": [""]}})").find("is not a capability word"),
            std::string::npos);
  EXPECT_NE(usage_error(R"({"profile": "x", "requires": {}, "backends": {"vulkan": []}})").find("unknown key \"requires\""),
            std::string::npos);
  EXPECT_THROW(DeviceProfile::load("no_such_device"), UsageError);
  EXPECT_THROW(DeviceProfile::load("/nonexistent/p.json"), UsageError);
}

TEST(DeviceProfile, MissingIsWhatTheBackendsEntryRequiresAndTheDeviceLacks) {
  const DeviceProfile p = DeviceProfile::parse(
      R"({"profile": "x", "backends": {"vulkan": ["shader-f16", "int8-dot-product", "subgroups"]}})", "p.json");
  EXPECT_EQ(p.missing("vulkan", {"shader-f16", "int8-dot-product=off", "subgroup-size=8", "subgroups"}),
            std::vector<std::string>{"int8-dot-product"});
  EXPECT_EQ(p.missing("webgpu", {}), std::vector<std::string>{}) << "a backend the profile does not name";
  EXPECT_TRUE(p.requires_capability("vulkan", "subgroups"));
  EXPECT_FALSE(p.requires_capability("vulkan", "bfloat16"));
  EXPECT_FALSE(p.requires_capability("webgpu", "subgroups"));
  EXPECT_FALSE(p.requires_capability("vulkan", "")) << "an UNSUPPORTED for a limit names no capability";
}

}  // namespace
}  // namespace ts
