#!/usr/bin/env bash
# The layers' include rule (README "Layout"): core <- properties <- reference <- gpu/plans <-
# {goldens, gpu} <- tools, and gpu <- {vulkan, webgpu}. A file may include headers of its own layer and of those below it,
# never above or beside it, and no third-party header its layer must not know (core: no GPU API,
# RapidCheck, Eigen, BLAS or test framework). CMake links each layer only to those below, but one
# include root lets any file name any header, so this is what catches a wrong-way include.
#   ci/layers.sh [ROOT]     check the tree at ROOT (default: this checkout); exit 1 naming each violation
#   ci/layers.sh --self-test  plant three wrong includes in a scratch tree and require all three caught
set -uo pipefail

if [ "${1:-}" = --self-test ]; then
  d=$(mktemp -d) || exit 2
  trap 'rm -rf "$d"' EXIT
  mkdir -p "$d/core" "$d/reference" "$d/gpu/webgpu"
  printf '#include "core/op.h"\n#include "reference/registry.h"\n' > "$d/core/a.h"
  printf '#include <vector>\n#include <rapidcheck.h>\n' > "$d/core/b.cpp"
  printf '#include "properties/generators.h"\n#include "gpu/embedded.h"\n' > "$d/reference/c.cpp"
  printf '#include "gpu/gpu_backend.h"\n#include "gpu/vulkan/context.h"\n' > "$d/gpu/webgpu/d.cpp"
  out=$(bash "$0" "$d"); rc=$?
  printf '%s\n' "$out"
  n=$(printf '%s\n' "$out" | grep -c ': includes ')
  if [ "$rc" = 1 ] && [ "$n" = 4 ]; then echo "layers self-test: all 4 wrong includes caught"; exit 0; fi
  echo "layers self-test: exit $rc with $n violations, expected exit 1 with 4" >&2
  exit 1
fi

root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
files=$(find core properties reference goldens gpu tools \( -name node_modules -o -name shaders \) -prune \
          -o \( -name '*.cpp' -o -name '*.h' \) -print 2>/dev/null | sort)
[ -n "$files" ] || { echo "layers: no sources under $root" >&2; exit 2; }

# shellcheck disable=SC2086
awk '
function layer(p) {
  if (p ~ /^gpu\/plans\//) return "gpu/plans"
  if (p ~ /^gpu\/vulkan\//) return "gpu/vulkan"
  if (p ~ /^gpu\/webgpu\//) return "gpu/webgpu"
  sub(/\/.*/, "", p)
  return p
}
BEGIN {
  may["core"] = "core"
  may["properties"] = "core properties"
  may["reference"] = "core properties reference"
  may["gpu/plans"] = "core properties reference gpu/plans"
  may["goldens"] = "core properties reference gpu/plans goldens"
  may["gpu"] = "core properties reference gpu/plans gpu"
  may["gpu/vulkan"] = "core properties reference gpu/plans gpu gpu/vulkan"
  may["gpu/webgpu"] = "core properties reference gpu/plans gpu gpu/webgpu"
  may["tools"] = "core properties reference gpu/plans goldens gpu gpu/vulkan gpu/webgpu tools"
  gpu_api = "vulkan/|volk\\.h|glslang/|spirv_cross|spirv-cross|SPIRV/"
  tests = "gtest/|gmock/"
  banned["core"] = gpu_api "|rapidcheck|" tests "|Eigen/|cblas|openssl/|CLI/"
  banned["properties"] = gpu_api "|" tests "|Eigen/|cblas|openssl/|CLI/"
  banned["reference"] = gpu_api "|rapidcheck|" tests "|openssl/|CLI/"
  banned["gpu/plans"] = gpu_api "|rapidcheck|" tests "|cblas|openssl/|CLI/"
  banned["goldens"] = gpu_api "|rapidcheck|" tests "|CLI/"
  banned["gpu"] = gpu_api "|rapidcheck|" tests "|Eigen/|cblas|CLI/"
  banned["gpu/vulkan"] = "rapidcheck|" tests "|Eigen/|cblas|CLI/"
  banned["gpu/webgpu"] = gpu_api "|rapidcheck|" tests "|Eigen/|cblas|CLI/"
  banned["tools"] = tests
  bad = 0
}
FNR == 1 { self = layer(FILENAME); nfiles++ }
/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
  line = $0
  sub(/^[ \t]*#[ \t]*include[ \t]*/, "", line)
  quoted = substr(line, 1, 1) == "\""
  name = substr(line, 2)
  sub(/[">].*/, "", name)
  other = quoted && name ~ /\// ? layer(name) : ""
  if (other in may) {
    if (index(" " may[self] " ", " " other " ") == 0) {
      printf "%s:%d: includes %s (layer %s); %s may include only %s\n", FILENAME, FNR, name, other, self, may[self]
      bad++
    }
  } else if (name ~ "^(" banned[self] ")") {
    printf "%s:%d: includes <%s>, which layer %s must not know\n", FILENAME, FNR, name, self
    bad++
  }
}
END {
  if (bad) { printf "layers: %d wrong-way include(s) in %d files\n", bad, nfiles; exit 1 }
  printf "layers: %d files, every include points down\n", nfiles
}' $files
