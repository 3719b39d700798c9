#!/usr/bin/env bash
# Configures and builds one build tree: ci/build.sh BUILD_DIR [cmake options...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; shift
[ -f "$dir/build.ninja" ] || cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir" -j "${TS_JOBS:-2}"
