#include "tools/device_peaks.h"

namespace ts {

std::optional<DevicePeaks> device_peaks(const std::string& name) {
  // NVIDIA's H100 and H200 datasheets (dense rates; the "with sparsity" figures are twice these).
  struct Known {
    const char* match;  // a substring of the adapter name
    DevicePeaks peaks;
  };
  static const Known kKnown[] = {
      {"H100 80GB HBM3", {"NVIDIA H100 SXM5", 989.4e12, 1978.9e12, 66.9e12, "NVIDIA H100 datasheet (SXM5, dense)"}},
      {"H100 PCIe", {"NVIDIA H100 PCIe", 756.5e12, 1513e12, 51.2e12, "NVIDIA H100 datasheet (PCIe, dense)"}},
      {"H200", {"NVIDIA H200 SXM", 989.4e12, 1978.9e12, 66.9e12, "NVIDIA H200 datasheet (SXM, dense)"}},
  };
  for (const Known& k : kKnown)
    if (name.find(k.match) != std::string::npos) return k.peaks;
  return std::nullopt;
}

double peak_for(const DevicePeaks& p, DType dtype) {
  switch (dtype) {
    case DType::f16:
    case DType::bf16: return p.f16_tensor;
    case DType::i8: return p.int8_tensor;
    case DType::f32: return p.f32;
    default: return 0;
  }
}

}  // namespace ts
