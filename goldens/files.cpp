#include "goldens/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/case.h"

namespace ts {
namespace {

constexpr std::string_view kTempMark = ".tmp-";

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw sys_error("cannot read", path);
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw sys_error("cannot read", path);
  return std::move(s).str();
}

std::string write_temp_beside(const std::string& path, std::string_view bytes) {
  std::filesystem::path p(path);
  std::string temp = (p.parent_path() / ("." + p.filename().string() + std::string(kTempMark) + "XXXXXX")).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) throw sys_error("cannot create a temporary file for", path);
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
  // mkstemp creates 0600; a committed golden should be as readable as any file of the tree.
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0 || ::close(fd) != 0) {
    auto err = sys_error("cannot write", temp);
    ::unlink(temp.c_str());
    throw err;
  }
  return temp;
}

void commit_temp(const std::string& temp, const std::string& path) {
  if (std::rename(temp.c_str(), path.c_str()) != 0) throw sys_error("cannot rename " + temp + " to", path);
}

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) throw sys_error("cannot open directory", dir);
  ::fsync(fd);  // some file systems refuse fsync on a directory; the renames have happened either way
  ::close(fd);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  commit_temp(write_temp_beside(path, bytes), path);
  sync_dir(std::filesystem::path(path).parent_path().string());
}

// provisional: see h-goldens
void check_output_path(const std::string& path) {
  if (path.empty()) throw UsageError("an output path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(path + " is a directory; name a file to write");
    if (!S_ISREG(st.st_mode))
      throw UsageError(path + " is not a regular file (a FIFO, device or socket); name a regular file to write");
  } else if (errno != ENOENT) {
    throw UsageError(path + ": " + std::strerror(errno));
  }
  // Outputs are written beside the destination and renamed over it: the directory must take a new
  // file. Trying is the only test that holds for root, read-only mounts and full disks alike.
  std::string temp;
  try {
    temp = write_temp_beside(std::filesystem::weakly_canonical(path).string(), "");
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot write to ") + path + ": " + e.what());
  }
  ::unlink(temp.c_str());
}

bool is_temp_name(std::string_view name) {
  size_t at = name.rfind(kTempMark);
  return !name.empty() && name[0] == '.' && at != std::string_view::npos && name.size() == at + kTempMark.size() + 6;
}

}  // namespace ts
