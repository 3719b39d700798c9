#pragma once
// Whole-file reads and crash-safe writes: a reader of a golden or manifest never sees half a file.
#include <string>
#include <string_view>

namespace ts {

// The file's bytes; throws std::runtime_error naming the path and the reason.
std::string read_file(const std::string& path);

// Writes `bytes` to a new temporary file in the directory of `path` (so the later rename stays on
// one file system) and fsyncs it; returns the temporary file's path.
std::string write_temp_beside(const std::string& path, std::string_view bytes);

// Renames a temporary file from write_temp_beside over `path`; the rename is durable once the
// directory is synced (one sync_dir serves many renames into one directory).
void commit_temp(const std::string& temp, const std::string& path);
void sync_dir(const std::string& dir);

// write_temp_beside + commit_temp + sync_dir.
void write_file_atomic(const std::string& path, std::string_view bytes);

// An output destination (--junit, -o) checked before any work starts: its directory exists and
// takes new files, and the path is not a directory, FIFO, device or socket (after symlinks).
void check_output_path(const std::string& path);  // throws UsageError

// Whether a file name is one of write_temp_beside's temporaries (left behind by a killed writer).
bool is_temp_name(std::string_view file_name);

}  // namespace ts
