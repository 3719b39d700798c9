#pragma once
// How every file a command writes (check's and repro's JUnit, JSON and HTML reports, bench's JSON,
// merge's outputs) reaches the disk, one mechanism for all of them: a destination checked before
// the run (check_output_path: a new or regular file, never a link or special file), replaced at the
// start by a notice that the run has not finished (so an earlier run's report never looks current),
// records spooled to unnamed temporary files while the run goes (memory does not grow with the
// number of cases), and the finished report written to a new temporary beside the destination and
// renamed over it (a reader never sees half a report). The destination itself is never opened: one
// swapped for a symbolic link or a FIFO during the run is refused at the rename (neither written
// through nor waited on). Any failed write, flush, fsync or close (a full disk, EIO, a file-size
// limit) throws std::runtime_error naming the report and the errno text, and the command exits 2,
// leaving the notice in place.
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// Writes a report through `emit(file, name_for_errors)`; std::runtime_error on a write error (the
// temporary is removed and `path` keeps what it held).
void write_report(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& emit);

// Replaces the file (or nothing) at `path` by `notice`, the same way.
void write_notice(const std::string& path, std::string_view notice);

// fwrite all of `s` or throw naming `path`.
void put(std::FILE* f, std::string_view s, const std::string& path);

// A file a command names on its command line, for check_distinct_files: "--json" and the path.
struct NamedFile {
  std::string what;
  std::string path;
};

// Each output names a file of its own, and none names an input: `--json x --junit x` would have
// one report overwrite the other, and `--json` naming the `--xfail` list (or merge's output one of
// its inputs) would destroy the input. UsageError naming both otherwise. A file that exists is
// compared by device and inode (a link or another spelling of the same file is caught), a path that
// does not yet exist by its absolute path with `.`, `..` and the links of its directories resolved.
void check_distinct_files(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs);

// "2026-11-21T08:54:17Z"
std::string utc_now();

// Records appended while a run goes, copied out once at the end; an unnamed temporary file, so
// nothing is left behind whatever ends the process.
class Spool {
 public:
  explicit Spool(std::string report);  // the report it belongs to, for messages
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  Spool(Spool&& o) noexcept : f_(o.f_), report_(std::move(o.report_)), bytes_(o.bytes_) { o.f_ = nullptr; }

  void append(std::string_view s);
  void copy_to(std::FILE* out, const std::string& out_name);  // further appends still go to the end
  bool empty() const { return bytes_ == 0; }

 private:
  std::FILE* f_ = nullptr;
  std::string report_;
  unsigned long long bytes_ = 0;
};

}  // namespace ts
