#pragma once
// Golden tensor files, `touchstone-golden/1` (SPEC "Golden files"): one case per safetensors file,
// its inputs in logical layout, its expected outputs as `expected.<output>`, and string metadata
// saying which operator, dtype and params, whether the case must pass or be rejected, and who
// computed the expected values.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/op.h"
#include "goldens/safetensors.h"

namespace ts {

inline constexpr std::string_view kGoldenFormat = "touchstone-golden/1";

struct Golden {
  std::string op;
  DType dtype = DType::f32;
  Params params = Params::object();
  bool reject = false;                     // expect = reject
  std::string source;
  std::optional<std::string> case_id;      // a Touchstone case id that rebuilds the inputs
  std::optional<uint64_t> seed;
  std::optional<Tolerance> tolerance;
  std::map<std::string, std::string> extra;  // metadata keys this version does not interpret, kept verbatim
  Tensors inputs;                          // by argument name
  Tensors expected;                        // by output name (the file's `expected.` prefix removed)
  Tensors aux;                             // informative, by full name (`aux.` kept); never verified
};

// Structure only: the metadata and tensor names follow the format. Whether the operator exists
// and the tensors fit it is for the verifier. Throws FormatError naming `file` and the problem.
Golden parse_golden(std::string_view bytes, const std::string& file);
// read_file's rules apply: anything but a regular file of at most kMaxReadBytes is a FormatError.
Golden read_golden(const std::string& path);

// Deterministic bytes: the same Golden gives the same file on every machine.
std::string serialize_golden(const Golden& g);
void write_golden(const std::string& path, const Golden& g);  // atomic: temp file, fsync, rename

}  // namespace ts
