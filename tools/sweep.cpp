#include "tools/sweep.h"

#include <rapidcheck.h>

#include "core/rng.h"

namespace ts {

Case draw_case(const OpDef& op, DType dtype, bool valid, uint64_t key, int size) {
  return op.generator(dtype, valid)(rc::Random(key), size).value();
}

std::vector<Case> sweep_cases(const OpDef& op, DType dtype, int count, uint64_t seed) {
  std::vector<Case> cases = op.edge_cases(dtype);
  if (dtype == DType::f32) cases.push_back(op.large_case());
  if (int(cases.size()) > count) cases.resize(size_t(std::max(count, 0)));
  const int random = count - int(cases.size());
  for (int k = 0; k < random; ++k) {
    uint64_t key = splitmix64(seed ^ fnv1a64(op.name) ^ (uint64_t(dtype) << 56) ^ splitmix64(uint64_t(k)));
    int size = random > 1 ? k * 100 / (random - 1) : 100;  // grow like RapidCheck: small cases first
    cases.push_back(draw_case(op, dtype, k % 5 != 4, key, size));
  }
  return cases;
}

}  // namespace ts
