// Metamorphic property of layouts (SPEC "Layouts"), on each GPU backend: a layout changes where a
// tensor's elements live, never what is computed. The same case (same vars, same seed, so the same
// input bytes) in two storages drawn from the operator's declaration must give
//  - bit-identical outputs for the RoPE family: each output element is the same float32 expression
//    of the same inputs whatever the addressing;
//  - for sdpa, outputs within twice its tolerance of each other (each run is within the bound of the
//    exact value; a texture may change the kernels' reduction order), caches bit-identical.
// A failure logs both case ids as repro lines. Valid cases only: rejections do not depend on layout
// (tests/test_properties.cpp checks them in drawn layouts).
#include <rapidcheck.h>

#include <cstring>

#include "core/runner.h"
#include "properties/draw.h"
#include "properties/gen_common.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"

namespace ts::test {
namespace {

using LayoutProperties = BackendTest;

bool rope_family(const OpDef& op) { return op.name.rfind("rope_", 0) == 0; }

TEST_P(LayoutProperties, SameCaseInTwoLayoutsGivesTheSameOutputs) {
  for (const OpDef* op : all_ops()) {
    bool ok = rc::check(cat(op->name, " on ", GetParam(), ": one case in two layouts, the same outputs"), [&] {
      const DType t = *rc::gen::elementOf(op->dtypes);
      const Case a = *op->generator(*op, t, true);
      Case b = a;
      b.storage = *draw::exec([op] { return gen::storage(*op); });
      RC_PRE(b.storage != a.storage);
      RC_LOG() << "touchstone repro '" << a.id() << "' --backend " << GetParam() << "\n"
               << "touchstone repro '" << b.id() << "' --backend " << GetParam() << "\n";
      const Problem pa = op->make(a), pb = op->make(b);
      RC_ASSERT(!op->validate(pa));
      RC_PRE(!op->validate(pb));  // storage rules (q8ta_add's packed_dim_compatible) may refuse the new layouts
      const RunOutput ra = backend().run(*op, pa), rb = backend().run(*op, pb);
      if (ra.status == RunOutput::Status::unsupported || rb.status == RunOutput::Status::unsupported) {
        // A limit (an image extent past maxImageDimension3D), or a capability the device says it
        // lacks (cooperative matrices): nothing else the kernels use is missing where the suite runs.
        RC_LOG() << ra.message << " / " << rb.message << "\n";
        RC_ASSERT(ra.capability.empty() || test::lacks_capability(ra.capability, backend()));
        RC_ASSERT(rb.capability.empty() || test::lacks_capability(rb.capability, backend()));
        RC_TAG("past a device limit");
        return;
      }
      RC_LOG() << "status " << int(ra.status) << " " << ra.message << " / " << int(rb.status) << " " << rb.message << "\n";
      RC_ASSERT(ra.status == RunOutput::Status::ok);
      RC_ASSERT(rb.status == RunOutput::Status::ok);
      for (auto& [name, x] : ra.outputs) {
        const Tensor& y = rb.outputs.at(name);
        RC_ASSERT(x.shape == y.shape);
        const bool exact = rope_family(*op) || !is_float(x.dtype) || name != "out";
        if (exact) {
          if (x.bytes != y.bytes) {
            const size_t es = dtype_size(x.dtype);
            size_t i = 0;
            while (i * es < x.bytes.size() && std::memcmp(&x.bytes[i * es], &y.bytes[i * es], es) == 0) ++i;
            RC_FAIL(cat(name, " differs first at flat index ", i, ": ", x.get(int64_t(i)), " in ", a.storage, ", ",
                        y.get(int64_t(i)), " in ", b.storage));
          }
          continue;
        }
        CompareReport r = compare(name, x, y.cast(DType::f64), scaled(op->tolerance(pa), 2), false);
        RC_LOG() << name << ": max abs " << r.max_abs << ", worst err/tol " << r.worst << "\n";
        RC_ASSERT(r.ok());
      }
    });
    EXPECT_TRUE(ok) << op->name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, LayoutProperties, ::testing::ValuesIn(kernel_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts::test
