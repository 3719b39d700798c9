#pragma once
// The safetensors container (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header mapping tensor names to dtype/shape/data_offsets plus an optional
// "__metadata__" string map, then the raw little-endian tensor bytes.
//
// The parser treats its input as hostile: every length, offset and count is checked against the
// bytes actually present before anything is read or allocated, and every problem is reported as a
// FormatError naming the file, never as a crash.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/tensor.h"

namespace ts {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SafeTensors {
  std::map<std::string, std::string> metadata;
  Tensors tensors;
};

// JSON nested deeper than this is refused before it is parsed. nlohmann parses iteratively, but
// copying, printing and comparing a value recurse once per level, so a header nested 100,000 deep
// would overflow the stack in the first error message. A golden header is 3 levels deep (header,
// tensor, shape) and its params a few more; 32 leaves room for any real file.
inline constexpr size_t kMaxJsonDepth = 32;

// Throws FormatError "<where> nests JSON deeper than 32 levels" for such text; counts the brackets
// outside strings only, and does not otherwise validate.
void check_json_depth(std::string_view text, const std::string& where);

// "F32", "F16", "BF16", "I8", "I32", "F64": the safetensors names of the dtypes Touchstone has.
std::string_view safetensors_dtype(DType t);
std::optional<DType> dtype_from_safetensors(std::string_view name);

// `file` only names the source in error messages.
SafeTensors parse_safetensors(std::string_view bytes, const std::string& file);

// Canonical bytes: JSON keys sorted, tensors stored in name order without gaps, the header padded
// with spaces to a multiple of 8 bytes (as the reference implementation does) so data is aligned.
std::string serialize_safetensors(const SafeTensors& st);

}  // namespace ts
