#pragma once
// One case from id to outcome: the reference's side is prepared once (inputs, contract verdict,
// float64 outputs) and then judged against each backend (SPEC "Comparison and outcomes").
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/case_rules.h"
#include "core/compare.h"

namespace ts {

enum class Outcome { pass, fail, rejected, unexpected_reject, missed_reject, unsupported, error };
std::string_view outcome_name(Outcome o);  // "PASS", "FAIL", ..., as in SPEC

struct Expected {
  Case c;
  const OpDef* op = nullptr;
  Problem problem;
  std::optional<Violation> violation;  // the reference rejects the case
  Tensors outputs;                     // valid cases: reference outputs
  Tolerance tol;
  std::string error;                   // the case could not even be built (malformed vars, crash)
};

// Builds the reference side of a case of `op`. Throws UsageError if the case breaks the operator's
// declaration or exceeds `max_bytes` (both before allocating); any other failure to build it is
// recorded in `error` (an ERROR outcome). Callers name a case by id: ts::prepare(const Case&)
// in gpu/plans/registry.h finds its operator.
// `max_bytes`: the host memory a case may take (check: kMaxCaseBytes; bench states its own).
Expected prepare(const OpDef& op, const Case& c, uint64_t max_bytes = kMaxCaseBytes);
// The same into `e`, calling `made(built)` as soon as the inputs and the contract verdict are in
// (built: e.error is empty), before the reference runs: a backend may run the case from then on
// while this thread computes the reference. After made(), only e.outputs, e.tol and e.error change.
// A usage error (malformed, too large) is thrown, whether or not made() was called.
void prepare(Expected& e, const OpDef& op, const Case& c, uint64_t max_bytes, const std::function<void(bool)>& made);

struct CaseResult {
  std::string id;
  std::string backend;
  Outcome outcome = Outcome::error;
  std::string detail;                 // one line: why it is not PASS (or the rule id when REJECTED)
  std::string rule;                   // REJECTED: the shared rule id
  std::string capability;             // UNSUPPORTED: the capability the device lacks (RunOutput::capability)
  std::vector<CompareReport> reports;
  std::map<std::string, GuardReport> guards;
  std::map<std::string, uint64_t> digests;  // fnv1a64 of each output's bytes: same bytes on a rerun
  // The kernels the case ran, in dispatch order, joined by " + ": which implementation an impl=auto
  // (or any) case took. Empty when no plan ran (rejected, error, unsupported).
  std::string kernels;
  double worst = 0;                   // max |err| / allowed over outputs (<= 1 passes)
  // A backend that states its own bound (RunOutput::tolerance): max |err| / the operator's own
  // allowance, which may exceed 1 on a PASS (the library is less precise than the operator's
  // kernels must be: a finding, reported, not a failure). -1 otherwise.
  double worst_own = -1;
  double seconds = 0;
};

// Runs the case on the backend and judges what it returned against the reference.
CaseResult judge(const Expected& e, Backend& backend);

// judge() in its two halves, so that the comparison can run on another thread than the backend's
// (check: each backend's calls stay on one thread, and comparing took 40% of that thread's time).
// run_case calls the backend and catches what it throws (callers never run a case that could not be
// built: Expected::error);
// judge_run decides the outcome; CaseResult::seconds is both halves' time together.
struct BackendRun {
  std::string backend;               // Backend::kind()
  RunOutput out;
  std::optional<std::string> threw;  // what the backend threw, if it did
  double seconds = 0;
};
BackendRun run_case(const OpDef& op, const Problem& p, Backend& backend);
CaseResult judge_run(const Expected& e, BackendRun run);

}  // namespace ts
