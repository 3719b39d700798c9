#include "goldens/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/case.h"
#include "core/contract.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kTempMark = ".tmp-";

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

const char* kind(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string dir_of(const std::string& path) {
  std::string d = fs::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

}  // namespace

std::string describe_path(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (!S_ISLNK(st.st_mode)) return kind(st.st_mode);
  std::string target(4096, '\0');
  ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  target.resize(n > 0 ? size_t(n) : 0);
  struct stat to;
  return cat("a symbolic link to ", target, " (", ::stat(path.c_str(), &to) == 0 ? kind(to.st_mode) : "which does not resolve",
             ")");
}

std::string read_file(const std::string& path, uint64_t max_bytes) {
  auto not_regular = [&] {
    return std::runtime_error(cat("cannot read ", path, ": it is ", describe_path(path),
                                  ", not a regular file (refused without reading: it could block or never end)"));
  };
  // stat before open: a device is refused without being opened at all (opening some has effects).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw sys_error("cannot read", path);
  if (!S_ISREG(st.st_mode)) throw not_regular();
  // Non-blocking: if the path was swapped for a FIFO since the stat, open returns at once and the
  // fstat below refuses it.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) throw sys_error("cannot read", path);
  if (::fstat(f.fd, &st) != 0) throw sys_error("cannot read", path);
  if (!S_ISREG(st.st_mode)) throw not_regular();
  const uint64_t size = uint64_t(st.st_size);
  if (size > max_bytes)
    throw std::runtime_error(cat("cannot read ", path, ": ", size, " bytes, more than the limit of ", max_bytes,
                                 " bytes for one file"));
  std::string out(size_t(size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(f.fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw sys_error("cannot read", path);
    if (n == 0) break;
    done += size_t(n);
  }
  // Reads stop at the size fstat gave; one more byte tells a file that is still growing.
  char extra;
  ssize_t more;
  while ((more = ::read(f.fd, &extra, 1)) < 0 && errno == EINTR) {
  }
  if (done != out.size() || more > 0)
    throw std::runtime_error(cat("cannot read ", path, ": its size changed while it was read (", size, " bytes by fstat)"));
  return out;
}

void check_output_path(const std::string& path) {
  auto refuse = [&](const std::string& why) { return UsageError(cat("cannot write output ", path, ": ", why)); };
  if (path.empty()) throw UsageError("an output path is empty");
  if (!fs::path(path).has_filename()) throw refuse("the path names a directory, not a file");
  struct stat st;
  bool exists = ::lstat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) throw refuse(std::strerror(errno));
  if (exists && S_ISLNK(st.st_mode))
    throw refuse(cat("it is ", describe_path(path),
                     "; outputs are not written through symbolic links (a link can redirect the write to a file of "
                     "its owner's choosing): name the file itself"));
  if (exists && S_ISDIR(st.st_mode)) throw refuse("it is a directory");
  if (exists && !S_ISREG(st.st_mode))
    throw refuse(cat("it is ", kind(st.st_mode),
                     ", not a regular file; an output is written to a temporary file and renamed over its path, "
                     "which would replace the node itself (to discard an output, leave the option out)"));
  if (exists && ::access(path.c_str(), W_OK) != 0) throw refuse(cat("it exists and is not writable (", std::strerror(errno), ")"));
  const uid_t file_owner = exists ? st.st_uid : 0;
  const std::string dir = dir_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    throw refuse(cat("directory ", dir, errno == ENOENT ? " does not exist" : cat(": ", std::strerror(errno))));
  if (!S_ISDIR(st.st_mode)) throw refuse(cat(dir, " is not a directory"));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw refuse(cat("directory ", dir, " is not writable (", std::strerror(errno), ")"));
  // access() says yes to root for any directory (e.g. /proc): prove it takes a new file.
  std::string probe = (fs::path(dir) / ("." + fs::path(path).filename().string() + std::string(kTempMark) + "XXXXXX")).string();
  int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) throw refuse(cat("directory ", dir, " takes no new file (", std::strerror(errno), ")"));
  ::close(fd);
  ::unlink(probe.c_str());
  // In a sticky directory (/tmp) only the owner of a file or of the directory may rename over it.
  const uid_t me = ::geteuid();
  if (exists && (st.st_mode & S_ISVTX) && me != 0 && file_owner != me && st.st_uid != me)
    throw refuse(cat("it belongs to another user and ", dir, " is a sticky directory, so it cannot be replaced"));
}

int open_temp_beside(const std::string& path, std::string& temp) {
  fs::path p(path);
  temp = (p.parent_path() / ("." + p.filename().string() + std::string(kTempMark) + "XXXXXX")).string();
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) throw sys_error("cannot create a temporary file for", path);
  // mkstemp creates 0600; an output should be as readable as any file the user writes.
  if (::fchmod(fd, 0644) != 0) {
    auto err = sys_error("cannot create a temporary file for", path);
    ::close(fd);
    ::unlink(temp.c_str());
    throw err;
  }
  return fd;
}

std::string write_temp_beside(const std::string& path, std::string_view bytes) {
  std::string temp;
  int fd = open_temp_beside(path, temp);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto err = sys_error("cannot write", temp);
      ::close(fd);
      ::unlink(temp.c_str());
      throw err;
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    auto err = sys_error("cannot write", temp);
    ::unlink(temp.c_str());
    throw err;
  }
  return temp;
}

void commit_temp(const std::string& temp, const std::string& path) {
  // Checked again at the last moment: the destination may have changed since check_output_path.
  // rename() itself would replace a link or device node, not write into it.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::string what = describe_path(path);
    ::unlink(temp.c_str());
    throw std::runtime_error(cat("refusing to replace ", path, ": it is ", what, ", not a regular file"));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    auto err = sys_error("cannot rename " + temp + " to", path);
    ::unlink(temp.c_str());
    throw err;
  }
}

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw sys_error("cannot open directory", dir);
  ::fsync(fd);  // some file systems refuse fsync on a directory; the renames have happened either way
  ::close(fd);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  check_output_path(path);
  commit_temp(write_temp_beside(path, bytes), path);
  sync_dir(dir_of(path));
}

bool is_temp_name(std::string_view name, std::string_view of) {
  size_t at = name.rfind(kTempMark);
  if (name.empty() || name[0] != '.' || at == std::string_view::npos || name.size() != at + kTempMark.size() + 6)
    return false;
  return of.empty() || name.substr(1, at - 1) == of;
}

}  // namespace ts
