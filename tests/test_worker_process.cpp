// WorkerProcess, the frame pipe every worker (Dawn, ONNX Runtime, ggml) is spoken to through, with a
// shell as the worker: replies come on descriptor kFrameFd, whatever the worker prints is only the
// tail its errors carry, and a reply that is not a frame ends the worker at once, naming its bytes.
#include <gtest/gtest.h>

#include <string>

#include "gpu/worker_process.h"

namespace ts {
namespace {

std::vector<std::string> shell(const std::string& script) { return {"/bin/sh", "-c", script}; }

// Dawn printed its compiler's warnings to stdout, which once carried the replies.
TEST(WorkerProcess, RepliesComeOnTheirOwnDescriptorAndPrintingGoesToTheTail) {
  WorkerProcess w(shell("echo a library printing; printf '\\006\\000\\000\\000\\004hello' >&3; cat > /dev/null"), "test");
  const Frame f = w.call(FrameType::info, {}, std::chrono::seconds(20));
  EXPECT_EQ(f.type, FrameType::error);
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "hello");
  w.stop();
  EXPECT_NE(w.stderr_tail().find("a library printing"), std::string::npos) << w.stderr_tail();
}

TEST(WorkerProcess, AReplyThatIsNotAFrameEndsTheWorkerNamingItsBytes) {
  WorkerProcess w(shell("printf 'warning: deprecated' >&3; sleep 20"), "test");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    w.call(FrameType::info, {}, std::chrono::seconds(60));
    ADD_FAILURE() << "a reply of text was taken for a frame";
  } catch (const WorkerLost& e) {
    EXPECT_NE(std::string(e.what()).find("not a frame (its first bytes: \"warni\")"), std::string::npos) << e.what();
  }
  // Not a speed assertion: the old reader waited for the text's "length" until the deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_FALSE(w.alive());
}

}  // namespace
}  // namespace ts
