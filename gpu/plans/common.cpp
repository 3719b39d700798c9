#include "gpu/plans/common.h"

#include <stdexcept>

namespace ts {

uint64_t out_texels(const Problem& p, const std::string& name, const Shape& s) {
  return uint64_t(physical(s, p.dtype, p.layout(name)).texels);
}

Tolerance derived_tolerance(DType t, Tensors bounds) {
  Tolerance tol;
  tol.atol = 0x1p-100;
  if (t == DType::f16) tol.atol += 0x1p-24, tol.rtol = 0x1p-10;
  if (t == DType::bf16) tol.atol += 0x1p-133, tol.rtol = 0x1p-8;  // round to nearest even: half an ulp (common.h)
  const double grow = (1 + tol.rtol) * (1 + 0x1p-20);
  for (auto& [name, b] : bounds) {
    if (b.dtype != DType::f64) throw std::invalid_argument(cat("bound of ", name, " must be float64, is ", b.describe()));
    double* v = reinterpret_cast<double*>(b.bytes.data());
    for (int64_t i = 0; i < b.numel(); ++i) v[i] *= grow;
    tol.elem[name] = std::make_shared<const Tensor>(std::move(b));
  }
  return tol;
}

double tensor_bytes(const Tensor& t) { return double(t.numel()) * double(dtype_size(t.dtype)); }

double elementwise_bytes(const Problem& p, const std::vector<std::string>& outputs_like) {
  double b = 0;
  for (auto& [name, t] : p.inputs) b += tensor_bytes(t);
  for (const std::string& name : outputs_like)
    b += double(p.inputs.at(name).numel()) * double(dtype_size(p.dtype));
  return b;
}

}  // namespace ts
