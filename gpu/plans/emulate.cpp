#include "gpu/plans/emulate.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ts {

float push(float v, double ulps, bool up) {
  if (std::isnan(v)) return v;
  constexpr int64_t kInf = 0x7f800000;  // +inf's bits: floats ordered as integers, -0 and +0 at 0
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  int64_t ord = (bits & 0x80000000u) ? -int64_t(bits & 0x7fffffffu) : int64_t(bits);
  const int64_t n = int64_t(std::min(std::floor(ulps), double(2 * kInf)));
  ord = std::clamp(up ? ord + n : ord - n, -kInf, kInf);
  bits = ord < 0 ? uint32_t(-ord) | 0x80000000u : uint32_t(ord);
  std::memcpy(&v, &bits, 4);
  return v;
}

Floats to_floats(const Tensors& in) {
  Floats f;
  for (auto& [name, t] : in) {
    std::vector<double> v = t.values();
    f[name].assign(v.begin(), v.end());
  }
  return f;
}

}  // namespace ts
