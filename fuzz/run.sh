#!/usr/bin/env bash
# Builds the golden reader fuzzer with clang (libFuzzer + ASan + UBSan) in build-fuzz/ and runs it
# for a bounded time on a corpus seeded with the committed goldens. Exits nonzero on any crash,
# leak or sanitizer report; the input that caused it is left in build-fuzz/artifacts/.
# Usage: fuzz/run.sh [SECONDS]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DTS_FUZZ=ON >/dev/null
ninja -C build-fuzz -j "${TS_JOBS:-2}" golden_reader_fuzz
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cp goldens/*.safetensors "$corpus"/
mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
build-fuzz/golden_reader_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix=build-fuzz/artifacts/ "$corpus"
