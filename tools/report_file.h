#pragma once
// How the report files (JUnit, JSON, HTML) reach the disk, one mechanism for all of them: a
// destination checked before the run (check_output_path), replaced at the start by a notice that
// the run has not finished (so an earlier run's report never looks current), records spooled to
// unnamed temporary files while the run goes (memory does not grow with the number of cases), and
// the finished report written beside the destination and renamed over it (a reader never sees half
// a report). A destination that is a device or pipe that check_output_path let through (/dev/null)
// is written into, never replaced.
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace ts {

// Writes a report through `emit(file, name_for_errors)`; std::runtime_error on a write error.
void write_report(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& emit);

// Replaces a regular file (or nothing) at `path` by `notice`; leaves a device or pipe alone.
void write_notice(const std::string& path, std::string_view notice);

// fwrite all of `s` or throw naming `path`.
void put(std::FILE* f, std::string_view s, const std::string& path);

// "2026-11-21T08:54:17Z"
std::string utc_now();

// Records appended while a run goes, copied out once at the end; an unnamed temporary file, so
// nothing is left behind whatever ends the process.
class Spool {
 public:
  Spool();
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  Spool(Spool&& o) noexcept : f_(o.f_) { o.f_ = nullptr; }

  void append(std::string_view s);
  void copy_to(std::FILE* out, const std::string& out_name);  // further appends still go to the end
  bool empty() const { return bytes_ == 0; }

 private:
  std::FILE* f_ = nullptr;
  unsigned long long bytes_ = 0;
};

}  // namespace ts
