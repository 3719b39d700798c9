#pragma once
// SHA-256 (FIPS 180-4), for the golden manifest: written here so a manifest can be checked with
// `sha256sum` and the build needs no crypto library.
#include <string>
#include <string_view>

namespace ts {
std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits
}  // namespace ts
