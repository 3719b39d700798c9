#pragma once
// A child process spoken to in frames (worker_protocol.h): requests on its stdin, replies on its
// descriptor kFrameFd, its stdout and stderr (one pipe) kept as a bounded tail for error messages.
// No threads: that pipe is drained whenever the parent waits on the child, and the child only
// writes much to it while it serves a request.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/worker_protocol.h"

namespace ts {

// The worker died or did not answer in time. It has been killed and reaped; the message names the
// cause and carries the tail of its stderr.
struct WorkerLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class WorkerProcess {
 public:
  static constexpr size_t kStderrTail = 16 * 1024;

  // Starts argv[0] (a path) with argv; throws std::runtime_error if it cannot be started. `label`
  // begins every message ("webgpu: worker (pid 12) ...").
  explicit WorkerProcess(const std::vector<std::string>& argv, std::string label = "webgpu");
  ~WorkerProcess();  // stop()
  // Closes the child's stdin (the worker leaves on its own), kills it if it lingers past `grace`,
  // reaps it and keeps what it wrote to stderr. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(500));
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one frame whose payload is the concatenation of `parts` and waits for the reply frame.
  // Throws WorkerLost (after killing the child) on death, timeout or a malformed reply.
  Frame call(FrameType type, const std::vector<std::span<const uint8_t>>& parts,
             std::chrono::milliseconds timeout);
  // Sends one frame that gets no reply (PREPARE). Throws WorkerLost like call().
  void post(FrameType type, const std::vector<std::span<const uint8_t>>& parts, std::chrono::milliseconds timeout);

  pid_t pid() const { return pid_; }
  bool alive() const { return pid_ > 0; }
  std::string stderr_tail() const { return tail_; }

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  void write_all(std::vector<std::span<const uint8_t>> parts, Deadline deadline);
  void read_exact(uint8_t* dst, size_t n, Deadline deadline);
  // Waits until `fd` is ready for `events` (POLLIN / POLLOUT), draining stderr meanwhile.
  void wait_for(int fd, short events, Deadline deadline);
  void drain_stderr();
  [[noreturn]] void lost(const std::string& why);
  std::string exit_status_text() const;

  pid_t pid_ = -1;
  int status_ = 0;  // waitpid status once reaped
  int in_ = -1, out_ = -1, err_ = -1;
  std::string tail_;
  std::string label_;
};

// The directory of the Vulkan layer the workers run with (ts_roll_loops_layer.json, built beside
// touchstone: gpu/vulkan/roll_loops_layer.cpp), or "" where there is none: then a CPU device
// compiles the workers' kernels with their loops unrolled, slower on a cold sweep and the same
// otherwise.
std::string find_layer_dir();
// The same as `VAR=value` words for /usr/bin/env, for a worker whose library creates its own Vulkan
// instance (ggml, ONNX Runtime's Dawn): empty where there is no layer.
std::vector<std::string> roll_loops_env();

}  // namespace ts
