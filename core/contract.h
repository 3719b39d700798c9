#pragma once
// Contract rules: every rule an input can break has a stable id and a message naming the values,
// e.g. "OP: head_dim (6) must be a multiple of 4 [head_dim_multiple_of_4]". The same validate()
// runs in the reference and inside every backend before anything is allocated.
#include <optional>
#include <sstream>
#include <string>

namespace ts {

struct Rule {
  std::string id;
  std::string text;  // the rule in words, for `touchstone list`
  // Broken only by a case's storage (its layouts), never by tensor values or shapes: a golden file
  // holds logical tensors, so none can break it (`golden verify --layout` can).
  bool about_storage = false;
};

struct Violation {
  std::string rule;
  std::string message;
};

template <class... A>
std::string cat(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

// Collects the first broken rule: `c.require(d % 2 == 0, "head_dim_even", "head_dim (", d, ") must be even")`.
class Contract {
 public:
  explicit Contract(std::string op) : op_(std::move(op)) {}
  template <class... A>
  Contract& require(bool ok, const char* rule, const A&... msg) {
    if (!ok && !v_) v_ = Violation{rule, cat(op_, ": ", msg..., " [", rule, "]")};
    return *this;
  }
  bool failed() const { return v_.has_value(); }
  std::optional<Violation> result() const { return v_; }

 private:
  std::string op_;
  std::optional<Violation> v_;
};

}  // namespace ts
