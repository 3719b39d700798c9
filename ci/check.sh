#!/usr/bin/env bash
# The main job: install what is missing, build, and run `touchstone check` on the backends this
# machine is expected to have: TS_BACKENDS (default vulkan,webgpu and the foreign ggml-vulkan,ort-webgpu; e.g. TS_BACKENDS=vulkan on a
# machine without Node). A named backend that cannot run fails the job (exit 2) instead of leaving
# its kernels unchecked. The backends are held to the device profile TS_PROFILE (ci/profiles/NAME.json
# or a path; default lavapipe, the device ci/setup.sh installs; empty: none): a capability it lists
# that a backend lacks fails the job (exit 2), and a case UNSUPPORTED for one fails the run (exit 1).
# Extra arguments go to `touchstone check` (e.g. --op rope_llama --junit check.xml); a --backend or
# --expect among them replaces TS_BACKENDS or TS_PROFILE, an --xfail the profile's known failures
# (ci/xfail/PROFILE.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
TS_TARGETS=touchstone bash ci/build.sh build  # the main job needs the binary, not the tests
backend=(--backend "${TS_BACKENDS:-vulkan,webgpu,ggml-vulkan,ort-webgpu}")
profile=${TS_PROFILE-lavapipe}
expect=()
[ -n "$profile" ] && expect=(--expect "$profile")
# The profile's known failures (ci/xfail/PROFILE.txt: findings in the foreign backends' libraries).
xfail=()
[ -n "$profile" ] && [ -f "ci/xfail/$profile.txt" ] && xfail=(--xfail "ci/xfail/$profile.txt")
for a in "$@"; do
  case $a in
    --backend|--backend=*) backend=() ;;
    --expect|--expect=*) expect=() ;;
    --xfail|--xfail=*) xfail=() ;;
  esac
done
exec ./build/touchstone check "${backend[@]}" "${expect[@]}" "${xfail[@]}" "$@"
