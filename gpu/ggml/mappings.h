#pragma once
// What ggml's Vulkan backend can express of Touchstone's operators (gpu/ggml/README.md says what
// matches and what differs). One Mapping per operator, each in its own file.
#include "gpu/foreign/foreign_backend.h"

namespace ts::ggml {

inline constexpr const char* kLibrary = "ggml-vulkan";

Mapping rope_llama();  // ROPE, mode NORMAL (rope.cpp)
Mapping rope_half();   // ROPE, mode NEOX (rope.cpp)
Mapping sdpa();        // SET_ROWS + FLASH_ATTN_EXT (sdpa.cpp)

}  // namespace ts::ggml
