// Property-based sweeps (RapidCheck), written once over all operators and instantiated per backend:
// backend(case) ~ reference(case); invalid cases rejected with the reference's rule id and nothing
// dispatched; metamorphic identities of the RoPE family on the backends' own outputs.
// A failure prints RapidCheck's RC_PARAMS reproduce line and the shrunk case's Touchstone id.
#include <rapidcheck.h>

#include "core/runner.h"
#include "reference/common.h"
#include "reference/ops.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"

namespace ts::test {
namespace {

using Properties = BackendTest;

rc::Gen<DType> gen_dtype() { return rc::gen::element(DType::f32, DType::f16); }

// The dtypes of `op` that have kernels to check (bfloat16 has none: BackendOps covers it).
rc::Gen<DType> gen_dtype(const OpDef& op) {
  std::vector<DType> v;
  for (DType t : op.dtypes)
    if (t != DType::bf16) v.push_back(t);
  return rc::gen::elementOf(v);
}

// Runs one generated case and asserts the outcome; the id goes into RapidCheck's log, which is
// printed with the shrunk counterexample.
void check_case(Backend& b, const Case& c) {
  RC_LOG() << "touchstone repro '" << c.id() << "' --backend " << b.kind() << "\n";
  Expected e = prepare(c);
  RC_ASSERT(e.error.empty());
  uint64_t allocs = b.allocations, dispatches = b.dispatches;
  CaseResult r = judge(e, b);
  RC_LOG() << outcome_name(r.outcome) << " " << r.detail << "\n";
  if (e.violation) {
    RC_ASSERT(r.outcome == Outcome::rejected);
    RC_ASSERT(r.rule == e.violation->rule);
    RC_ASSERT(b.allocations == allocs);
    RC_ASSERT(b.dispatches == dispatches);
  } else {
    RC_ASSERT(r.outcome == Outcome::pass || test::lacks_capability(r, b));
  }
}

TEST_P(Properties, BackendMatchesReference) {
  for (const OpDef* op : all_ops()) {
    bool ok = rc::check(cat(op->name, " on ", GetParam(), " matches the reference"), [&] {
      DType t = *gen_dtype(*op);
      check_case(backend(), *op->generator(*op, t, true));
    });
    EXPECT_TRUE(ok) << op->name;
  }
}

TEST_P(Properties, InvalidCasesRejectedWithTheSameRule) {
  for (const OpDef* op : all_ops()) {
    bool ok = rc::check(cat(op->name, " on ", GetParam(), " rejects like the reference"), [&] {
      DType t = *gen_dtype(*op);
      check_case(backend(), *op->generator(*op, t, false));
    });
    EXPECT_TRUE(ok) << op->name;
  }
}

// Runs `p` on the backend and returns its outputs (asserting the run succeeded).
Tensors run_ok(Backend& b, const OpDef& op, const Problem& p) {
  RunOutput out = b.run(op, p);
  RC_ASSERT(out.status == RunOutput::Status::ok);
  return out.outputs;
}

void rc_assert_close(const Tensor& got, const Tensor& want, Tolerance tol) {
  CompareReport r = compare("out", got, want.cast(DType::f64), tol, false);
  RC_LOG() << "max abs " << r.max_abs << ", worst err/tol " << r.worst << "\n";
  RC_ASSERT(r.ok());
}

// rope_matrix with the half-rotation matrix equals rope_half; with the interleave matrix (cos/sin
// repeated per pair) it equals the interleaved rotation of rope_llama — on the backend itself.
TEST_P(Properties, RopeMatrixSpecialisesToHalfAndInterleave) {
  EXPECT_TRUE(rc::check("rope_matrix(half) == rope_half, rope_matrix(interleave) == rope_llama", [&] {
    Case c = *gen_rope_matrix(named_op("rope_matrix"), *gen_dtype(), true);
    c.set("mode", *rc::gen::element<std::string>("half", "interleave"));
    c.set("D", 2 * *rc::gen::inRange<int64_t>(1, 33));
    c.vars.erase(std::remove_if(c.vars.begin(), c.vars.end(), [](auto& kv) { return kv.first == "sections"; }),
                 c.vars.end());
    RC_LOG() << c.id() << "\n";
    Problem pm = named_op("rope_matrix").make(c);
    Tensor mat = run_ok(backend(), named_op("rope_matrix"), pm).at("out");
    // Two backend results, each within the op's bound of the exact value: twice the bound apart.
    Tolerance tol = scaled(named_op("rope_matrix").tolerance(pm), 2);
    const Tensor &x = pm.inputs.at("x"), &cs = pm.inputs.at("cos"), &sn = pm.inputs.at("sin");
    if (c.word("mode", "") == "half") {
      Problem ph = pm;
      ph.inputs.erase("m");
      rc_assert_close(run_ok(backend(), named_op("rope_half"), ph).at("out"), mat, tol);
    } else {
      // x [B,H,S,D] as xq [B*H, S, 1, D]: the same memory order.
      const int64_t S = x.shape[2], D = x.shape[3];
      Problem pl;
      pl.dtype = pm.dtype;
      Tensor xq = x;
      xq.shape = {x.shape[0] * x.shape[1], S, 1, D};
      Tensor fc(x.dtype, {S, D / 2}), fs(x.dtype, {S, D / 2});
      for (int64_t s = 0; s < S; ++s)
        for (int64_t k = 0; k < D / 2; ++k) {
          fc.set(s * D / 2 + k, cs.get(s * D + 2 * k));
          fs.set(s * D / 2 + k, sn.get(s * D + 2 * k));
        }
      pl.inputs = {{"xq", xq}, {"xk", xq}, {"freqs_cos", fc}, {"freqs_sin", fs}};
      Tensor got = run_ok(backend(), named_op("rope_llama"), pl).at("xq_out");
      got.shape = mat.shape;
      rc_assert_close(got, mat, tol);
    }
  }));
}

// rope_llama with angle 0 (cos 1, sin 0) is the identity (bit for bit, but for the sign of zero); rotating by a then by b
// equals rotating by a+b within two roundings of the output.
TEST_P(Properties, RopeLlamaRotationsCompose) {
  EXPECT_TRUE(rc::check("rope_llama: zero angle is identity, a then b == a+b", [&] {
    Case c = *gen_rope_llama(named_op("rope_llama"), *gen_dtype(), true);
    RC_LOG() << c.id() << "\n";
    Problem p = named_op("rope_llama").make(c);
    const Shape fshape = p.inputs.at("freqs_cos").shape;
    auto tables = [&](double scale) {
      Problem q = p;
      for (int64_t i = 0; i < numel(fshape); ++i) {
        double ang = scale * double(i % 97) * 0.37;  // arbitrary distinct angles per (s, pair)
        q.inputs.at("freqs_cos").set(i, std::cos(ang));
        q.inputs.at("freqs_sin").set(i, std::sin(ang));
      }
      return q;
    };
    Tensors id = run_ok(backend(), named_op("rope_llama"), tables(0.0));
    // Equal values, so equal bits but for the sign of a zero: IEEE makes x*1 - y*0 = +0 for x = -0
    // and y < 0, on the reference as on any kernel.
    for (const char* name : {"xq", "xk"}) {
      const Tensor &got = id.at(std::string(name) + "_out"), &x = p.inputs.at(name);
      for (int64_t i = 0; i < numel(x.shape); ++i) RC_ASSERT(got.get(i) == x.get(i));
    }

    Problem a = tables(1.0), b = tables(2.0), ab = tables(3.0);
    Tensors once = run_ok(backend(), named_op("rope_llama"), a);
    b.inputs.at("xq") = once.at("xq_out");
    b.inputs.at("xk") = once.at("xk_out");
    Tensors twice = run_ok(backend(), named_op("rope_llama"), b);
    Tensors direct = run_ok(backend(), named_op("rope_llama"), ab);
    // Rounded tables: cos(a)cos(b) - sin(a)sin(b) differs from the rounded cos(a+b) by a few units of
    // the table dtype, and the intermediate output is rounded once more: twice the op's tolerance.
    // The arithmetic of each of the three rotations errs by at most gamma_2 (|a| + |b|) per element
    // (rope_llama's bound with |cos|, |sin| <= 1): |x| <= 1 before the first rotation, sqrt 2 after.
    Tolerance tol = named_op("rope_llama").tolerance(p);
    tol.atol = 2 * tol.atol + 8 * (p.dtype == DType::f16 ? 0x1p-11 : 0x1p-24) + 2 * (2 + std::sqrt(2.0)) * gamma_f32(2);
    tol.rtol *= 2;
    rc_assert_close(twice.at("xq_out"), direct.at("xq_out"), tol);
    rc_assert_close(twice.at("xk_out"), direct.at("xk_out"), tol);
  }));
}

// rope_cis on x [B,N,C] equals rope_llama on the same data viewed as xq [B,N,1,C] with the
// (cos, sin) pairs of freqs_cis split into two tables.
TEST_P(Properties, RopeCisEqualsRopeLlamaOnPairs) {
  EXPECT_TRUE(rc::check("rope_cis == rope_llama on the same pairs", [&] {
    Case c = *gen_rope_cis(named_op("rope_cis"), *gen_dtype(), true);
    RC_LOG() << c.id() << "\n";
    Problem pc = named_op("rope_cis").make(c);
    const Tensor &x = pc.inputs.at("x"), &f = pc.inputs.at("freqs_cis");
    const int64_t B = x.shape[0], N = x.shape[1], C = x.shape[2];
    Problem pl;
    pl.dtype = pc.dtype;
    Tensor xq = x;
    xq.shape = {B, N, 1, C};
    Tensor fc(x.dtype, {N, C / 2}), fs(x.dtype, {N, C / 2});
    for (int64_t j = 0; j < N * C / 2; ++j) {
      fc.set(j, f.get(2 * j));
      fs.set(j, f.get(2 * j + 1));
    }
    pl.inputs = {{"xq", xq}, {"xk", xq}, {"freqs_cos", fc}, {"freqs_sin", fs}};
    Tensor got = run_ok(backend(), named_op("rope_llama"), pl).at("xq_out");
    got.shape = x.shape;
    rc_assert_close(got, run_ok(backend(), named_op("rope_cis"), pc).at("out"), scaled(named_op("rope_cis").tolerance(pc), 2));
  }));
}

INSTANTIATE_TEST_SUITE_P(All, Properties, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts::test
