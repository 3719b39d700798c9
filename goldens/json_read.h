#pragma once
// JSON from files that may be hostile (goldens' metadata, manifests, merge's shard reports), read
// and parsed within one set of limits: the file's size (goldens/files.h, kMaxReadBytes) and its
// nesting (goldens/safetensors.h, kMaxJsonDepth), both checked before nlohmann builds a value.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "goldens/files.h"

namespace ts {

// `text` parsed after check_json_depth; FormatError naming `where` for nesting past the limit or
// text that is not JSON.
nlohmann::json parse_json_within_limits(std::string_view text, const std::string& where);

// read_file(path, max_bytes) and parse_json_within_limits; std::runtime_error (FormatError for the
// text) naming the path.
nlohmann::json read_json_file(const std::string& path, uint64_t max_bytes = kMaxReadBytes);

}  // namespace ts
