#pragma once
// Node.js, which the workers written in JavaScript run on (gpu/webgpu, gpu/ort).
#include <string>

namespace ts {

// An executable node: `requested` (a path, or a name looked up on PATH), else $TOUCHSTONE_NODE,
// else `node` on PATH. Empty, with the reason in *why_not, if there is none.
std::string find_node(const std::string& requested, std::string* why_not);

}  // namespace ts
