#include "tools/report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "core/contract.h"
#include "core/errors.h"
#include "goldens/files.h"

namespace ts {
namespace {

std::runtime_error write_error(const std::string& path) {
  return std::runtime_error(cat("cannot write ", path, ": ", std::strerror(errno)));
}

// What makes two paths the same file: its device and inode, or where none exists yet, its
// normalised absolute path.
std::string identity(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return cat("inode ", st.st_dev, ":", st.st_ino);
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) p = std::filesystem::absolute(path, ec).lexically_normal();
  return cat("path ", p.string());
}

}  // namespace

void check_distinct_files(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs) {
  std::vector<std::pair<std::string, const NamedFile*>> seen;
  auto clash = [&](const NamedFile& f) -> const NamedFile* {
    const std::string id = identity(f.path);
    for (auto& [other, named] : seen)
      if (other == id) return named;
    seen.emplace_back(id, &f);
    return nullptr;
  };
  for (const NamedFile& in : inputs) clash(in);
  const size_t n_inputs = seen.size();
  for (const NamedFile& out : outputs) {
    const NamedFile* other = clash(out);
    if (!other) continue;
    const bool input = std::any_of(seen.begin(), seen.begin() + long(n_inputs), [&](auto& s) { return s.second == other; });
    throw UsageError(cat(out.what, " ", out.path, " and ", other->what, " ", other->path, " name the same file: ",
                         input ? "writing the output would destroy that input" : "one output would overwrite the other",
                         "; give each output a file of its own"));
  }
}

void put(std::FILE* f, std::string_view s, const std::string& path) {
  if (!s.empty() && std::fwrite(s.data(), 1, s.size(), f) != s.size()) throw write_error(path);
}

std::string utc_now() {
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  return when;
}

void write_report(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& emit) {
  std::string temp;
  const int fd = open_temp_beside(path, temp);
  std::FILE* f = ::fdopen(fd, "wb");
  try {
    if (!f) {
      ::close(fd);
      throw write_error(path);
    }
    emit(f, path);
    if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) throw write_error(path);
    std::FILE* closing = f;
    f = nullptr;
    if (std::fclose(closing) != 0) throw write_error(path);
    commit_temp(temp, path);  // refuses a destination that became a link or special file
  } catch (...) {
    if (f) std::fclose(f);
    ::unlink(temp.c_str());
    throw;
  }
  sync_dir(std::filesystem::path(path).parent_path().string());
}

void write_notice(const std::string& path, std::string_view notice) {
  write_report(path, [&](std::FILE* f, const std::string& name) { put(f, notice, name); });
}

Spool::Spool(std::string report) : f_(std::tmpfile()), report_(std::move(report)) {
  if (!f_) throw std::runtime_error(cat("cannot create a temporary file for report ", report_, ": ", std::strerror(errno)));
}

Spool::~Spool() {
  if (f_) std::fclose(f_);
}

void Spool::append(std::string_view s) {
  put(f_, s, cat("the temporary file of report ", report_));
  bytes_ += s.size();
}

void Spool::copy_to(std::FILE* out, const std::string& out_name) {
  const std::string mine = cat("the temporary file of report ", report_);
  if (std::fflush(f_) != 0 || std::fseek(f_, 0, SEEK_SET) != 0) throw write_error(mine);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f_)) > 0) put(out, std::string_view(buf, n), out_name);
  if (std::ferror(f_)) throw write_error(mine);
  std::fseek(f_, 0, SEEK_END);
}

}  // namespace ts
