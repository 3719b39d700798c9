#!/usr/bin/env bash
# The test suite: install what is missing, build, run ctest; then build and run the suite once
# more under AddressSanitizer + UndefinedBehaviorSanitizer (set TS_SKIP_SANITIZE=1 to skip that),
# where the tests marked TS_RELEASE_PASS_ONLY (whole GPU sweeps) are skipped with their reason.
# The ctest cli_expected_backends_available fails unless every backend in TS_BACKENDS (default
# vulkan,webgpu,ggml-vulkan,ort-webgpu) runs on this machine: a missing backend fails the suite, never skips it quietly.
# Each step prints its wall time (`ci/test.sh: ... s`), so a slow CI log shows where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
export TS_BACKENDS=${TS_BACKENDS:-vulkan,webgpu,ggml-vulkan,ort-webgpu}
step() {
  local name=$1 t0=$SECONDS; shift
  "$@"
  echo "ci/test.sh: $name took $((SECONDS - t0)) s (${SECONDS} s in all)"
}
release_ctest() { (cd build && ctest --output-on-failure -j "${TS_JOBS:-2}" --timeout 600); }
sanitized_ctest() {
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export LSAN_OPTIONS=suppressions=$PWD/ci/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure -j "${TS_JOBS:-2}" --timeout 900)
}
step setup bash ci/setup.sh
step "the Release build" bash ci/build.sh build
step "the Release ctest" release_ctest
# A part of the default sweep, cold, idle and beside two CPU-bound processes: same verdicts, no ERROR.
step "the load test" bash ci/load_test.sh build
# The golden reader under libFuzzer for a bounded time, seeded with the committed goldens.
step "the fuzzer" bash fuzz/run.sh "${TS_FUZZ_SECONDS:-20}"
if [ "${TS_SKIP_SANITIZE:-0}" != 1 ]; then
  step "the sanitized build" bash ci/build.sh build-asan -DTS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  step "the sanitized ctest" sanitized_ctest
fi
