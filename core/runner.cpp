#include "core/runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/case_rules.h"
#include "core/profile.h"
#include "core/rng.h"

namespace ts {

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "PASS";
    case Outcome::fail: return "FAIL";
    case Outcome::rejected: return "REJECTED";
    case Outcome::unexpected_reject: return "UNEXPECTED_REJECT";
    case Outcome::missed_reject: return "MISSED_REJECT";
    case Outcome::unsupported: return "UNSUPPORTED";
    case Outcome::error: return "ERROR";
  }
  return "?";
}

Expected prepare(const OpDef& op, const Case& c, uint64_t max_bytes) {
  Expected e;
  prepare(e, op, c, max_bytes, [](bool) {});
  return e;
}

void prepare(Expected& e, const OpDef& op, const Case& c, uint64_t max_bytes, const std::function<void(bool)>& made) {
  check_case(op, c);
  check_case_size(op, c, max_bytes);
  e.c = c;
  e.op = &op;
  AllocationLimit limit(max_bytes);
  Phase ph("prepare: inputs, reference, tolerance");
  bool announced = false;
  try {
    e.problem = make_problem(*e.op, c);
    e.violation = e.op->validate(e.problem);
    announced = true;
    made(true);
    if (!e.violation) {
      // The reference's float64 outputs, estimated from the declaration before they are allocated.
      AllocationLimit::charge(declared_output_bytes(*e.op, e.problem), {});
      e.outputs = e.op->reference(e.problem);
      e.tol = e.op->tolerance(e.problem);
    }
  } catch (const UsageError&) {
    throw;  // malformed or too large: the caller's input, not a test outcome
  } catch (const std::exception& ex) {
    e.error = cat("building the case failed: ", ex.what());
  }
  if (!announced) made(false);
}

namespace {

// `scratch_unwritten`: a scratch buffer had unwritten elements, whose poison (a NaN) later kernels
// may have carried into this output bit for bit.
std::string describe_failure(const CompareReport& r, const Tensor& got, bool scratch_unwritten) {
  if (r.first_bad < 0) return "";
  std::string s = cat(r.output, ": ", r.mismatches, " of ", r.count, " elements outside tolerance");
  if (r.unwritten)
    s += scratch_unwritten ? cat(" (", r.unwritten, " hold the poison pattern: never written, or computed from unwritten scratch)")
                           : cat(" (", r.unwritten, " never written)");
  // 9 digits tell a float32 result from its neighbours; the error is shown against what was allowed
  // there (atol + the element's own bound + rtol*|want|).
  char buf[160];
  std::snprintf(buf, sizeof buf, ": got %.9g, want %.9g (error %.3g, allowed %.3g)", r.first_got, r.first_want,
                std::fabs(r.first_got - r.first_want), r.first_allowed);
  s += cat("; first at ", index_str(got.shape, r.first_bad), buf);
  return s;
}

}  // namespace

BackendRun run_case(const OpDef& op, const Problem& p, Backend& backend) {
  BackendRun b;
  b.backend = std::string(backend.kind());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Phase ph("judge: backend run");
    b.out = backend.run(op, p);
  } catch (const std::exception& ex) {
    b.threw = ex.what();
  }
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

CaseResult judge_run(const Expected& e, BackendRun b) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult r;
  r.id = e.c.id();
  r.backend = std::move(b.backend);
  auto done = [&](Outcome o, std::string detail) {
    r.outcome = o;
    r.detail = std::move(detail);
    r.seconds = b.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  if (!e.error.empty()) return done(Outcome::error, e.error);
  if (b.threw) return done(Outcome::error, cat("backend threw: ", *b.threw));
  RunOutput& out = b.out;
  using S = RunOutput::Status;
  if (out.status == S::error) return done(Outcome::error, out.message);
  if (e.violation) {
    if (out.status != S::rejected)
      return done(Outcome::missed_reject, cat("reference rejects (", e.violation->message, ") but ", r.backend,
                                              out.status == S::unsupported ? " reports UNSUPPORTED" : " ran it"));
    if (out.violation.rule != e.violation->rule)
      return done(Outcome::missed_reject, cat("rule ids differ: reference [", e.violation->rule, "], ", r.backend,
                                              " [", out.violation.rule, "]: ", out.violation.message));
    r.rule = e.violation->rule;
    return done(Outcome::rejected, e.violation->message);
  }
  if (out.status == S::rejected)
    return done(Outcome::unexpected_reject, cat(r.backend, " rejects a valid case: ", out.violation.message));
  if (out.status == S::unsupported) {
    r.capability = out.capability;
    return done(Outcome::unsupported, out.message);
  }

  if (!out.ran.empty())
    r.kernels = out.ran;
  else
    for (const Dispatch& d : e.op->plan(e.problem)) r.kernels += cat(r.kernels.empty() ? "" : " + ", d.kernel);
  const Tolerance& bound = out.tolerance ? *out.tolerance : e.tol;
  std::string detail;
  // Scratch first: an unwritten intermediate is the cause of whatever the outputs show.
  bool scratch_unwritten = false;
  for (auto& [name, sc] : out.scratch)
    if (sc.unwritten) {
      scratch_unwritten = true;
      detail += cat(detail.empty() ? "" : "; ", name, ": ", sc.unwritten, " of ", numel(sc.shape), " elements never written",
                    sc.first_kernel.empty() ? " (no kernel binds this scratch buffer)"
                                            : cat(" by ", sc.first_kernel, ", the first kernel to bind this scratch buffer"),
                    "; first at ", index_str(sc.shape, sc.first_unwritten));
    }
  r.guards = out.guards;
  for (auto& [name, g] : out.guards)
    if (g.bad_bytes)
      detail += cat(detail.empty() ? "" : "; ", name, ": ", g.bad_bytes, " guard bytes overwritten (first at byte ",
                    g.first_offset, g.first_offset < 0 ? ", before the tensor" : ", past the end", ")");
  for (auto& [name, g] : out.guards)
    if (g.bad_padding)
      detail += cat(detail.empty() ? "" : "; ", name, ": ", g.bad_padding, " padding lanes not zero (first in texel ",
                    g.first_bad_texel, " of its ", layout_name(e.problem.layout(name)), " layout)");
  for (auto& [name, want] : e.outputs) {
    auto it = out.outputs.find(name);
    if (it == out.outputs.end()) {
      detail += cat(detail.empty() ? "" : "; ", name, ": no output returned");
      r.worst = INFINITY;
      continue;
    }
    // The reference holds float64 for computed outputs and the output dtype for exact copies.
    const bool exact = want.dtype != DType::f64 && is_float(it->second.dtype);
    auto mask = out.unwritten.find(name);
    const std::vector<uint8_t>* never = mask == out.unwritten.end() ? nullptr : &mask->second;
    Phase ph("judge: compare");
    CompareReport rep = compare(name, it->second, want, exact ? Tolerance{0, 0} : bound, true, never);
    if (out.tolerance && !exact)
      r.worst_own = std::max(r.worst_own, compare(name, it->second, want, e.tol, true, never).worst);
    const Tensor& got = it->second;
    r.digests[name] = fnv1a64(std::string_view(reinterpret_cast<const char*>(got.bytes.data()), got.bytes.size()));
    r.worst = std::max(r.worst, rep.worst);
    if (!rep.ok()) detail += (detail.empty() ? "" : "; ") + describe_failure(rep, it->second, scratch_unwritten);
    r.reports.push_back(std::move(rep));
  }
  if (!detail.empty()) detail += cat(" (ran ", r.kernels, ")");
  return done(detail.empty() ? Outcome::pass : Outcome::fail, detail);
}

CaseResult judge(const Expected& e, Backend& backend) {
  // A case that could not be built never reaches the backend: judge_run reports its own error.
  return judge_run(e, e.error.empty() ? run_case(*e.op, e.problem, backend) : BackendRun{std::string(backend.kind())});
}

}  // namespace ts
