#include "gpu/plans/q8ta_emulate.h"

#include "gpu/plans/emulate.h"
#include "reference/q8ta_common.h"

namespace ts::q8ta {

Requantizer::Requantizer(const Params& p, bool up) : zp(p.at("output_zero_point").get<int64_t>()) {
  const float os = float(p.at("output_scale").get<double>());
  inv = float(1.0 / double(os));
  if (!is_pow2(os)) inv = push(inv, 1, up);
}

float Requantizer::operator()(float v) const { return float(requantize(double(v * inv), zp)); }

AccumulatorEmulation::AccumulatorEmulation(const Problem& p, const Floats& in, bool up)
    : store(p.params, up),
      input_scale(float(p.params.at("input_scale").get<double>())),
      x_zp(int32_t(p.params.at("input_zero_point").get<int64_t>())),
      weight_scales(in.at("weight_scales")),
      bias(p.inputs.count("bias") ? &in.at("bias") : nullptr) {}

float AccumulatorEmulation::operator()(int32_t acc, int64_t n) const {
  float y = float(acc) * input_scale * weight_scales[size_t(n)];
  if (bias) y += (*bias)[size_t(n)];
  return store(y);
}

}  // namespace ts::q8ta
