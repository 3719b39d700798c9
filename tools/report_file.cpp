#include "tools/report_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "core/contract.h"
#include "goldens/files.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// Follows symlinks, so the report replaces the link's target and the link stays.
std::string resolve_links(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

std::runtime_error write_error(const std::string& path) {
  return std::runtime_error(cat("cannot write ", path, ": ", std::strerror(errno)));
}

bool is_special(const std::string& target) {
  struct stat st;
  return ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

}  // namespace

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
  const std::string target = resolve_links(path);
  if (is_special(target)) {
    std::FILE* f = std::fopen(target.c_str(), "w");
    if (!f) throw write_error(target);
    try {
      emit(f, target);
    } catch (...) {
      std::fclose(f);
      throw;
    }
    if (std::fclose(f) != 0) throw write_error(target);
    return;
  }
  const std::string temp = write_temp_beside(target, "");
  std::FILE* f = std::fopen(temp.c_str(), "ab");
  try {
    if (!f) throw write_error(temp);
    emit(f, temp);
    if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) throw write_error(temp);
    std::FILE* closing = f;
    f = nullptr;
    if (std::fclose(closing) != 0) throw write_error(temp);
    commit_temp(temp, target);
  } catch (...) {
    if (f) std::fclose(f);
    ::unlink(temp.c_str());
    throw;
  }
  sync_dir(fs::path(target).parent_path().string());
}

void write_notice(const std::string& path, std::string_view notice) {
  const std::string target = resolve_links(path);
  if (is_special(target)) return;  // a device or pipe holds nothing stale
  write_file_atomic(target, notice);
}

Spool::Spool() : f_(std::tmpfile()) {
  if (!f_) throw std::runtime_error(cat("cannot create a temporary file for a report: ", std::strerror(errno)));
}

Spool::~Spool() {
  if (f_) std::fclose(f_);
}

void Spool::append(std::string_view s) {
  put(f_, s, "a report's temporary file");
  bytes_ += s.size();
}

void Spool::copy_to(std::FILE* out, const std::string& out_name) {
  if (std::fflush(f_) != 0 || std::fseek(f_, 0, SEEK_SET) != 0) throw write_error("a temporary file");
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f_)) > 0) put(out, std::string_view(buf, n), out_name);
  if (std::ferror(f_)) throw write_error("a temporary file");
  std::fseek(f_, 0, SEEK_END);
}

}  // namespace ts
