#pragma once
// Where the WebGPU worker's pieces are: the node binary and the folder whose node_modules holds the
// npm package `webgpu` (installed by ci/setup.sh into gpu/webgpu).
#include <string>

namespace ts::webgpu {


// `requested` if given, else the first of $TOUCHSTONE_WEBGPU_DIR, <exe dir>/../gpu/webgpu,
// <exe dir>/gpu/webgpu and the source tree's gpu/webgpu that holds node_modules/webgpu.
// Empty, with the places searched in *why_not, if none does.
std::string find_modules_dir(const std::string& requested, std::string* why_not);


}  // namespace ts::webgpu
