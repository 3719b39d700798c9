#pragma once
#include <stdexcept>

namespace ts {

// A user's input (case id, CLI flag) was malformed: exit code 2, never a test outcome.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A case whose tensors would overflow int64 arithmetic or exceed kMaxCaseBytes
// (core/case_rules.h): refused before anything is allocated.
struct CaseTooLarge : UsageError {
  using UsageError::UsageError;
};

}  // namespace ts
