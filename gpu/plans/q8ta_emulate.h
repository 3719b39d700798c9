#pragma once
// The int8 kernels' requantization as they compute it (reference/q8ta_common.h states the model),
// for the int8 plans' emulations: exact integer accumulators, then float32 arithmetic, then round
// half to even, the zero point, the clamp. 1/output_scale is the host's float32 reciprocal, except
// that for an output scale that is not a power of two it is pushed one ulp further, as a device
// reciprocal (2.5 ulp) may be; a power of two's reciprocal is exact on the host.
#include <cstdint>

#include "core/op.h"

namespace ts::q8ta {

struct Requantizer {
  float inv = 0;
  int64_t zp = 0;
  Requantizer(const Params& p, bool up);
  float operator()(float v) const;  // the final int8 value, as a float
};

// An accumulator operator's output element: acc * input_scale * weight_scales[n] (+ bias[n]), requantized.
struct AccumulatorEmulation {
  Requantizer store;
  float input_scale;
  int32_t x_zp;
  const std::vector<float>& weight_scales;
  const std::vector<float>* bias;
  AccumulatorEmulation(const Problem& p, const Floats& in, bool up);
  float operator()(int32_t acc, int64_t n) const;
};

}  // namespace ts::q8ta
