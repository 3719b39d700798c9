#include "tools/args.h"

#include "core/contract.h"

namespace ts {

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      args_.push_back(a.substr(0, eq));
      args_.push_back(a.substr(eq + 1));
    } else {
      args_.push_back(a);
    }
  }
  used_.assign(args_.size(), false);
}

std::vector<std::string> Args::list(const std::string& name) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || args_[i] != name) continue;
    if (i + 1 >= args_.size()) throw UsageError(name + " needs a value");
    used_[i] = used_[i + 1] = true;
    std::string v = args_[i + 1];
    size_t start = 0;
    for (size_t j = 0; j <= v.size(); ++j)
      if (j == v.size() || v[j] == ',') {
        if (j > start) out.push_back(v.substr(start, j - start));
        start = j + 1;
      }
  }
  return out;
}

std::string Args::value(const std::string& name, std::string dflt) {
  auto v = list(name);
  if (v.size() > 1) throw UsageError(name + " takes one value");
  return v.empty() ? dflt : v[0];
}

long long Args::integer(const std::string& name, long long dflt) {
  std::string v = value(name, "");
  if (v.empty()) return dflt;
  try {
    size_t pos;
    long long r = std::stoll(v, &pos);
    if (pos != v.size()) throw std::invalid_argument(v);
    return r;
  } catch (const std::exception&) {
    throw UsageError(cat(name, " must be an integer, got '", v, "'"));
  }
}

bool Args::flag(const std::string& name) {
  bool found = false;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i] == name) used_[i] = found = true;
  return found;
}

std::vector<std::string> Args::positional() {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i].rfind("--", 0) != 0) {
      used_[i] = true;
      out.push_back(args_[i]);
    }
  return out;
}

void Args::finish() const {
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i]) throw UsageError(cat("unexpected argument '", args_[i], "' (see touchstone --help)"));
}

}  // namespace ts
