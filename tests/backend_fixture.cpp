#include "tests/backend_fixture.h"

namespace ts::test {

BackendCache& backend_cache() {
  static BackendCache cache;
  return cache;
}

namespace {
class ReleaseSharedBackends : public ::testing::Environment {
 public:
  void TearDown() override { backend_cache().clear(); }
};
// gtest_main owns main(); a global environment is its hook to run before exit.
[[maybe_unused]] ::testing::Environment* const kRelease = ::testing::AddGlobalTestEnvironment(new ReleaseSharedBackends);
}  // namespace

}  // namespace ts::test
