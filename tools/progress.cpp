#include "tools/progress.h"

#include <cstdio>

#include "tools/check_pipeline.h"

namespace ts {
namespace {

std::string duration(double s) {
  if (!(s >= 0) || s > 359999) return "--:--";
  const long long t = (long long)(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  return buf;
}

}  // namespace

std::string progress_text(long long done, long long total, double seconds, long long failing) {
  const double rate = seconds > 0 ? double(done) / seconds : 0;
  const double left = rate > 0 ? double(total - done) / rate : -1;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %lld of %lld cases (%.1f%%)  %.0f cases/s  ETA %s  %lld failing", done, total,
                total > 0 ? 100.0 * double(done) / double(total) : 100.0, rate, duration(left).c_str(), failing);
  return buf;
}

Progress::Progress(long long total, bool enabled)
    : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {
  next_ = start_ + std::chrono::milliseconds(int(kShowAfterSeconds * 1000));
}

void Progress::update(long long done, long long failing) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + std::chrono::milliseconds(200);
  const std::string text = progress_text(done, total_, std::chrono::duration<double>(now - start_).count(), failing);
  std::fprintf(stderr, "\r\033[K%s", text.c_str());  // carriage return, erase to the end of the line
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

namespace {

class ProgressReporter : public CheckReporter {
 public:
  ProgressReporter(long long total, bool live) : progress_(total, live) {}
  void case_reached() override { progress_.update(++done_, failing_); }
  void result(const CaseVerdict& v) override { failing_ += v.fails_run(); }
  void sweep_finished(std::span<const Group>) override { progress_.clear(); }  // the sweep's lines follow
  void cases_ended() override { progress_.clear(); }

 private:
  Progress progress_;
  long long done_ = 0, failing_ = 0;
};

}  // namespace

std::unique_ptr<CheckReporter> progress_reporter(const CheckOptions& o, const SweepPlan& plan, bool live) {
  long long positions = 0;
  for (auto& [op, dtypes] : plan) positions += (long long)dtypes.size() * o.cases;
  return std::make_unique<ProgressReporter>((positions - o.shard + o.shards - 1) / o.shards, live);
}

}  // namespace ts
