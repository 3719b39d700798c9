#pragma once
// Whole-file reads and crash-safe writes: a reader of a golden or manifest never sees half a file,
// never blocks on or streams from something that is not a regular file, and a writer never
// replaces a symbolic link, a device node or another special file.
#include <cstdint>
#include <string>
#include <string_view>

namespace ts {

// The largest file read_file accepts by default. A verify run holds a golden's bytes, its parsed
// tensors and the reference's float64 outputs at once (about 3x the file), so 1 GiB bounds one
// file's cost to a few GiB of memory, while the largest real single-case golden (a few transformer
// layers' worth of KV cache) stays well below it; the committed set is kilobytes.
inline constexpr uint64_t kMaxReadBytes = uint64_t(1) << 30;

// The bytes of a regular file (a symbolic link to one is followed); throws std::runtime_error
// naming the path and the reason. Anything else is refused without reading from it: a FIFO (which
// would block), a device such as /dev/zero (endless), a directory or a socket, and a file larger
// than `max_bytes`. The file is opened non-blocking, so not even opening it can hang.
std::string read_file(const std::string& path, uint64_t max_bytes = kMaxReadBytes);

// What a path is, for messages: "a FIFO", "a character device", "a directory", "a symbolic link
// to /dev/zero (a character device)", ...; "" if nothing is there.
std::string describe_path(const std::string& path);

// That `path` can take an output file, checked before any work starts so a bad destination is a
// usage error in the first second, not a lost result at the end of a run. Throws UsageError
// naming the path and the rule unless:
//  - its directory exists, is a directory and is writable (an output is written to a temporary
//    file there and renamed over `path`), and
//  - `path` does not exist, or is a regular file that is writable and not a symbolic link.
// Symbolic links are refused, not written through: a link in a shared directory (/tmp, a CI
// workspace) is the classic way to make another user's tool overwrite a file of the link owner's
// choosing, and an atomic replace of the link's target would also drop the target's hard links,
// owner and mode. Naming the target itself (`readlink -f`) is a one-word fix for a deliberate link.
// Special files are refused because a rename would replace the node itself: `-o /dev/null` must not
// turn /dev/null into a regular file. To discard an output, leave the option out.
void check_output_path(const std::string& path);

// Creates a new, empty temporary file in the directory of `path` (mode 0644; O_EXCL, so never an
// existing node or a link) and returns its descriptor, open for writing; its path goes to `temp`.
int open_temp_beside(const std::string& path, std::string& temp);

// Writes `bytes` to a new temporary file in the directory of `path` (so the later rename stays on
// one file system) and fsyncs it; returns the temporary file's path.
std::string write_temp_beside(const std::string& path, std::string_view bytes);

// Renames a temporary file from write_temp_beside over `path`, after checking again that `path` is
// not a symbolic link or special file (std::runtime_error if it is; the temporary is then removed).
// The rename is durable once the directory is synced (one sync_dir serves many renames into one
// directory).
void commit_temp(const std::string& temp, const std::string& path);
void sync_dir(const std::string& dir);

// check_output_path + write_temp_beside + commit_temp + sync_dir.
void write_file_atomic(const std::string& path, std::string_view bytes);

// Whether a file name is one of write_temp_beside's temporaries (left behind by a killed writer),
// and if `of` is given, a temporary of that file name.
bool is_temp_name(std::string_view file_name, std::string_view of = {});

}  // namespace ts
