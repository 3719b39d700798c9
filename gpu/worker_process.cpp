#include "gpu/worker_process.h"

#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "core/contract.h"

extern char** environ;

namespace ts {

namespace {

// Writing to a pipe whose reader died raises SIGPIPE, which would kill the whole test process.
// The signal is blocked in this thread around the write and a SIGPIPE the write caused is
// consumed, so the write just fails with EPIPE; process-wide signal state is left alone.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE)) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return int(std::max<int64_t>(0, left.count()));
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv, std::string label) : label_(std::move(label)) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(cat(label_, ": pipe: ", std::strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    throw std::runtime_error(cat(label_, ": pipe: ", std::strerror(errno)));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    throw std::runtime_error(cat(label_, ": pipe: ", std::strerror(errno)));
  }
  // The replies come on the child's descriptor kFrameFd, not its stdout: a library in the worker
  // that prints (Dawn printed its shader compiler's warnings to stdout) would otherwise corrupt the
  // frames, and a length read from text kept the backend waiting for gigabytes until the worker's
  // deadline. Its stdout joins its stderr.
  // The pipe's write end is moved above the descriptors dup2 fills first, so no dup2 here has the
  // same source and target (which would leave close-on-exec set). dup2 clears close-on-exec on the
  // child's 0/1/2/kFrameFd only; every other descriptor, ours included, stays out of the child.
  const int frames = fcntl(out[1], F_DUPFD_CLOEXEC, kFrameFd + 1);
  close(out[1]);
  out[1] = frames;
  if (out[1] < 0) {
    close(in[0]), close(in[1]), close(out[0]), close(err[0]), close(err[1]);
    throw std::runtime_error(cat(label_, ": fcntl: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, err[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_adddup2(&fa, out[1], kFrameFd);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]), close(out[1]), close(err[1]);
  in_ = in[1], out_ = out[0], err_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    close_fd(in_), close_fd(out_), close_fd(err_);
    throw std::runtime_error(cat(label_, ": cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  set_nonblocking(in_);
  set_nonblocking(out_);
  set_nonblocking(err_);
}

WorkerProcess::~WorkerProcess() {
  stop();
  close_fd(out_), close_fd(err_);
}

void WorkerProcess::stop(std::chrono::milliseconds grace) {
  if (!alive()) return;
  close_fd(in_);  // EOF on the worker's stdin: it exits by itself
  auto until = std::chrono::steady_clock::now() + grace;
  pid_t r = 0;
  while ((r = waitpid(pid_, &status_, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (r == 0) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
  }
  drain_stderr();
  pid_ = -1;
}

std::string WorkerProcess::exit_status_text() const {
  if (WIFSIGNALED(status_)) return cat("killed by signal ", WTERMSIG(status_), " (", strsignal(WTERMSIG(status_)), ")");
  if (WIFEXITED(status_)) return cat("exited with status ", WEXITSTATUS(status_));
  return "stopped";
}

void WorkerProcess::lost(const std::string& why) {
  pid_t pid = pid_;
  stop(std::chrono::milliseconds(0));  // a worker that failed us gets no grace period
  std::string msg = cat(label_, ": worker (pid ", pid, ") ", why, "; it ", exit_status_text());
  if (!tail_.empty()) msg += cat("; its stderr ends with:\n", tail_);
  throw WorkerLost(msg);
}

void WorkerProcess::drain_stderr() {
  if (err_ < 0) return;
  char buf[4096];
  for (;;) {
    ssize_t n = read(err_, buf, sizeof buf);
    if (n > 0) {
      tail_.append(buf, size_t(n));
      if (tail_.size() > kStderrTail) tail_.erase(0, tail_.size() - kStderrTail);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) close_fd(err_);  // the child closed it (it is exiting)
    return;
  }
}

void WorkerProcess::wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {err_, POLLIN, 0}};
    int n = poll(fds, err_ >= 0 ? 2 : 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) lost(cat("could not be polled: ", std::strerror(errno)));
    if (n == 0) lost("did not answer in time");
    if (err_ >= 0 && fds[1].revents) drain_stderr();
    if (fds[0].revents) return;  // ready, or hung up: the read / write that follows tells which
  }
}

void WorkerProcess::write_all(std::vector<std::span<const uint8_t>> parts, Deadline deadline) {
  SigpipeBlock block;
  // One writev for the whole frame where the pipe takes it: every write wakes the worker, which
  // would otherwise handle each small piece as its own chunk.
  size_t first = 0;
  while (first < parts.size()) {
    std::vector<iovec> iov;
    for (size_t i = first; i < parts.size() && iov.size() < IOV_MAX; ++i)
      iov.push_back({const_cast<uint8_t*>(parts[i].data()), parts[i].size()});
    ssize_t n = writev(in_, iov.data(), int(iov.size()));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      wait_for(in_, POLLOUT, deadline);
      continue;
    }
    if (n < 0) lost(cat("stopped reading its requests (", std::strerror(errno), ")"));
    size_t done = size_t(n);
    for (; first < parts.size() && done >= parts[first].size(); ++first) done -= parts[first].size();
    if (done) parts[first] = parts[first].subspan(done);
  }
}

void WorkerProcess::read_exact(uint8_t* dst, size_t n, Deadline deadline) {
  while (n) {
    ssize_t got = read(out_, dst, n);
    if (got > 0) {
      dst += got;
      n -= size_t(got);
    } else if (got == 0) {
      lost("closed its output");
    } else if (errno == EAGAIN || errno == EINTR) {
      wait_for(out_, POLLIN, deadline);
    } else {
      lost(cat("could not be read: ", std::strerror(errno)));
    }
  }
}

Frame WorkerProcess::call(FrameType type, const std::vector<std::span<const uint8_t>>& parts,
                          std::chrono::milliseconds timeout) {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  post(type, parts, timeout);
  uint8_t head[5];
  read_exact(head, 5, deadline);
  uint32_t reply_len;
  std::memcpy(&reply_len, head, 4);
  if (reply_len == 0) lost("sent an empty frame");
  if (head[4] < uint8_t(FrameType::info) || head[4] > uint8_t(FrameType::times)) {
    std::string said;
    for (uint8_t c : head) said += c >= 32 && c < 127 ? std::string(1, char(c)) : cat("\\x", "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]);
    lost(cat("sent something that is not a frame (its first bytes: \"", said, "\")"));
  }
  Frame f;
  f.type = FrameType(head[4]);
  f.payload.resize(reply_len - 1);
  read_exact(f.payload.data(), f.payload.size(), deadline);
  return f;
}

void WorkerProcess::post(FrameType type, const std::vector<std::span<const uint8_t>>& parts,
                         std::chrono::milliseconds timeout) {
  if (!alive()) throw WorkerLost(cat(label_, ": worker is not running"));
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  uint64_t len = 1;
  for (auto p : parts) len += p.size();
  if (len > UINT32_MAX) throw std::runtime_error(cat(label_, ": a request of ", len, " bytes exceeds the 4 GiB frame limit"));
  uint8_t head[5];
  const uint32_t len32 = uint32_t(len);
  std::memcpy(head, &len32, 4);  // little-endian hosts only (x86-64, arm64)
  head[4] = uint8_t(type);
  std::vector<std::span<const uint8_t>> all = {head};
  all.insert(all.end(), parts.begin(), parts.end());
  write_all(std::move(all), deadline);
}

std::string find_layer_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = exe.parent_path();
  return fs::is_regular_file(dir / "ts_roll_loops_layer.json", ec) ? dir.string() : "";
}

std::vector<std::string> roll_loops_env() {
  const std::string dir = find_layer_dir();
  if (dir.empty()) return {};
  return {"VK_ADD_LAYER_PATH=" + dir, "VK_INSTANCE_LAYERS=VK_LAYER_TOUCHSTONE_roll_loops"};
}

}  // namespace ts
