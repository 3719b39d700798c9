#pragma once
// SHA-256 for the golden manifest (OpenSSL's), so a manifest can be checked with `sha256sum`.
#include <string>
#include <string_view>

namespace ts {
std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits
bool is_sha256_hex(std::string_view text);      // whether `text` is such a digest
}  // namespace ts
