#pragma once
// A case: everything needed to rebuild one test input, data included, from one printable id:
//   <op>/<k=v,k=v,...>/<dtype>/<storage>/seed=<n>
// e.g. OP/B=1,S=1,Hq=32,Hkv=8,D=128/float16/buffer/seed=1234 (SPEC "Case ids")
// Values are integers or words without '/', ',' or '='; lists use ':' (sections=44:44:40). The
// storage part is a layout with optional per-tensor overrides (core/layout.h). Parsing checks the
// syntax; core/case_rules.h checks an id against its operator's declaration.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/errors.h"

namespace ts {

struct Case {
  std::string op;
  std::vector<std::pair<std::string, std::string>> vars;
  DType dtype = DType::f32;
  std::string storage = "buffer";
  uint64_t seed = 0;

  std::string id() const;
  static Case parse(std::string_view id);  // throws UsageError naming the bad part

  bool has(std::string_view key) const;
  const std::string* find(std::string_view key) const;
  int64_t get(std::string_view key) const;                 // required integer var
  int64_t get(std::string_view key, int64_t dflt) const;   // optional integer var
  std::string word(std::string_view key, std::string dflt) const;
  std::vector<int64_t> list(std::string_view key) const;   // "44:44:40" -> {44,44,40}; absent -> {}
  Case& set(std::string key, int64_t v);
  Case& set(std::string key, std::string v);
};

}  // namespace ts
