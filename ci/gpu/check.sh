#!/usr/bin/env bash
# On the NVIDIA machine, from a checkout carrying gpu-bundle/: `touchstone check` on both backends
# (TS_BACKENDS), held to the nvidia device profile (ci/profiles/nvidia.json; TS_PROFILE names another,
# empty: none), as ci/check.sh holds lavapipe. Arguments go to `touchstone check`; a --backend or
# --expect among them replaces TS_BACKENDS or TS_PROFILE.
#   bash gpu-bundle/check.sh --op sdpa --junit sdpa.xml
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
backend=(--backend "${TS_BACKENDS:-vulkan,webgpu}")
profile=${TS_PROFILE-nvidia}
expect=()
[ -n "$profile" ] && expect=(--expect "$profile")
for a in "$@"; do
  case $a in
    --backend|--backend=*) backend=() ;;
    --expect|--expect=*) expect=() ;;
  esac
done
exec bash "$here/run.sh" "$here/touchstone" check "${backend[@]}" "${expect[@]}" "$@"
