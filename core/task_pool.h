#pragma once
// A fixed number of threads over one queue of tasks: Vulkan's compile-ahead threads
// (VulkanBackend::precompile), check's lane per backend (one thread: tasks run in the order handed
// in) and its comparing pool. A task must not throw (wrap it in a
// std::packaged_task or a std::promise for a result or an error).
// drain() returns once every task handed in so far has finished; the destructor drains, so nothing a
// task uses may be destroyed before the pool.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ts {

class TaskPool {
 public:
  // A thread that cannot be made (a memory or thread limit) is a std::runtime_error saying how many
  // were asked for; the threads already made are stopped first (a joinable std::thread destroyed
  // by the unwinding would call std::terminate).
  explicit TaskPool(unsigned threads) {
    const unsigned n = std::max(1u, threads);
    for (unsigned i = 0; i < n; ++i) {
      try {
        threads_.emplace_back([this] { work(); });
      } catch (const std::system_error& e) {
        stop();
        throw std::runtime_error("cannot start thread " + std::to_string(i + 1) + " of " + std::to_string(n) +
                                 " of a task pool: " + e.what() + " (a memory or thread limit)");
      }
    }
  }
  ~TaskPool() { stop(); }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  void drain() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
  }

 private:
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void work() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
      lock.unlock();
      task();
      lock.lock();
      --busy_;
      if (queue_.empty() && busy_ == 0) idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> queue_;
  unsigned busy_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ts
