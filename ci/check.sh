#!/usr/bin/env bash
# The main job: install what is missing, build, and run `touchstone check` on every backend found.
# Extra arguments go to `touchstone check` (e.g. --op rope_llama --junit check.xml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
bash ci/build.sh build
exec ./build/touchstone check "$@"
