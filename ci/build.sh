#!/usr/bin/env bash
# Configures and builds one build tree: ci/build.sh BUILD_DIR [cmake options...]
# TS_TARGETS names the targets to build (default: all; ci/check.sh builds only the touchstone binary).
# Debug information is line tables only (-g1): backtraces and sanitizer reports keep file and line,
# and a runner that compiles two trees from nothing is spared the full -g's compile time (the
# cmake options given here come after, so an explicit CMAKE_CXX_FLAGS_<CONFIG> still wins).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; shift
[ -f "$dir/build.ninja" ] || cmake -S . -B "$dir" -G Ninja \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG="-g1" "$@" >/dev/null
# shellcheck disable=SC2086
ninja -C "$dir" -j "${TS_JOBS:-2}" ${TS_TARGETS:-}
