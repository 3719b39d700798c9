#pragma once
// A device's peak arithmetic rates, from its vendor's datasheet (dense, no sparsity), where Touchstone
// knows the device: bench states each workload's rate against the matching peak, list shows them.
// No API reports these; an unknown device has none, and bench then shows no share of peak.
#include <optional>
#include <string>

#include "core/tensor.h"

namespace ts {

struct DevicePeaks {
  std::string device;       // the datasheet's name
  double f16_tensor = 0;    // float16 multiply, float32 accumulate on tensor cores: FLOP/s
  double int8_tensor = 0;   // int8 multiply, int32 accumulate on tensor cores: OP/s
  double f32 = 0;           // float32 FMA on the general cores: FLOP/s
  std::string source;
};

// The peaks of the device whose (adapter) name is `name`, if known.
std::optional<DevicePeaks> device_peaks(const std::string& name);

// The peak a workload of `dtype` is measured against: the tensor rate of its multiply type (float16
// and bfloat16: f16_tensor; int8: int8_tensor), float32's general rate; 0 if none.
double peak_for(const DevicePeaks& p, DType dtype);

}  // namespace ts
