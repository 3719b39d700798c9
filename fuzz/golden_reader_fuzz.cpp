// libFuzzer entry for the golden reader (fuzz/run.sh): any bytes must become a Golden or a
// FormatError, never a crash, a leak, an out-of-bounds read or another exception; and a file that
// reads must write back canonically (its canonical bytes read and write back unchanged).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "goldens/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ts::Golden g;
  try {
    g = ts::parse_golden(bytes, "fuzz input");
  } catch (const ts::FormatError&) {
    return 0;
  }
  std::string canonical = ts::serialize_golden(g);
  if (ts::serialize_golden(ts::parse_golden(canonical, "canonical form")) != canonical) __builtin_trap();
  return 0;
}
