#pragma once
// A small command-line reader: `--name value`, `--name=value`, repeated or comma-separated lists,
// boolean switches; anything left over or unknown is a usage error (exit code 2).
#include <string>
#include <vector>

#include "core/case.h"

namespace ts {

class Args {
 public:
  Args(int argc, char** argv, int first);
  std::vector<std::string> list(const std::string& name);     // all values, split on ','
  std::string value(const std::string& name, std::string dflt);
  long long integer(const std::string& name, long long dflt);
  bool flag(const std::string& name);
  std::vector<std::string> positional();  // what is left that does not start with "--"
  void finish() const;                    // throws UsageError for anything not consumed

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

}  // namespace ts
