#include "goldens/json_read.h"

#include "core/contract.h"
#include "goldens/safetensors.h"

namespace ts {

nlohmann::json parse_json_within_limits(std::string_view text, const std::string& where) {
  check_json_depth(text, where);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(where, " is not valid JSON: ", e.what()));
  }
}

nlohmann::json read_json_file(const std::string& path, uint64_t max_bytes) {
  return parse_json_within_limits(read_file(path, max_bytes), path);
}

}  // namespace ts
