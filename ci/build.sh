#!/usr/bin/env bash
# Configures and builds one build tree: ci/build.sh BUILD_DIR [cmake options...]
# TS_TARGETS names the targets to build (default: all; ci/check.sh builds only the touchstone binary).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; shift
[ -f "$dir/build.ninja" ] || cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
# shellcheck disable=SC2086
ninja -C "$dir" -j "${TS_JOBS:-2}" ${TS_TARGETS:-}
