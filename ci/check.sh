#!/usr/bin/env bash
# The main job: install what is missing, build, and run `touchstone check` on the backends this
# machine is expected to have: TS_BACKENDS (default vulkan,webgpu; e.g. TS_BACKENDS=vulkan on a
# machine without Node). A named backend that cannot run fails the job (exit 2) instead of leaving
# its kernels unchecked. Extra arguments go to `touchstone check` (e.g. --op rope_llama --junit
# check.xml); a --backend among them replaces TS_BACKENDS.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
TS_TARGETS=touchstone bash ci/build.sh build  # the main job needs the binary, not the tests
backend=(--backend "${TS_BACKENDS:-vulkan,webgpu}")
for a in "$@"; do
  case $a in --backend|--backend=*) backend=() ;; esac
done
exec ./build/touchstone check "${backend[@]}" "$@"
