#include "gpu/kernel_source.h"

#include <set>
#include <stdexcept>

#include "core/embedded.h"

namespace ts {
namespace {

// The file name of an `#include "name"` line, or nullopt for any other line.
std::optional<std::string> include_of(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, 8) != "#include") return std::nullopt;
  i = line.find_first_not_of(" \t", i + 8);
  if (i == std::string_view::npos || line[i] != '"') return std::nullopt;
  const size_t end = line.find('"', i + 1);
  if (end == std::string_view::npos || line.find_first_not_of(" \t\r", end + 1) != std::string_view::npos) return std::nullopt;
  return std::string(line.substr(i + 1, end - i - 1));
}

void resolve(std::string_view source, const std::string& dir, const std::string& what, const IncludeReader& read,
             std::set<std::string>& seen, std::string& out) {
  size_t at = 0;
  while (at < source.size()) {
    size_t nl = source.find('\n', at);
    const size_t end = nl == std::string_view::npos ? source.size() : nl + 1;
    const std::string_view line = source.substr(at, end - at);
    at = end;
    const std::optional<std::string> name = include_of(line.substr(0, line.size() - (line.ends_with('\n') ? 1 : 0)));
    if (!name) {
      out += line;
      continue;
    }
    if (!seen.insert(*name).second) {
      out += "\n";  // included already: keeps the line count of what follows
      continue;
    }
    std::optional<std::string> text;
    if (read) {
      text = read(*name);
    } else if (embedded_files().count(dir + *name)) {
      text = std::string(embedded(dir + *name));
    }
    if (!text) throw std::runtime_error(what + ": #include \"" + *name + "\": no such file " + dir + *name);
    resolve(*text, dir, what, read, seen, out);
    if (!out.empty() && out.back() != '\n') out += "\n";
  }
}

}  // namespace

std::string resolve_includes(std::string_view source, const std::string& dir, const std::string& what,
                             const IncludeReader& read) {
  std::set<std::string> seen;
  std::string out;
  out.reserve(source.size());
  resolve(source, dir, what, read, seen, out);
  return out;
}

}  // namespace ts
