#!/usr/bin/env bash
# On the NVIDIA machine, from a checkout carrying gpu-bundle/ (bundle.sh without TS_BUNDLE_FOREIGN):
# the whole test binary, in TS_SHARDS (default 8) shards side by side, each within TS_SHARD_TIMEOUT
# seconds (default 520: a device run's limit is 600). The tests find the touchstone binary and the
# sources at the paths they were built with, so this links those paths to the checkout. A shard's
# log is /tmp/ts-shard-K.txt (copied into $OUT where that is set). Tests that hold only on lavapipe
# skip, saying so; the report tests need python3's jsonschema, which run.sh brings where it lacks.
#   bash gpu-bundle/run.sh bash gpu-bundle/suite.sh [gtest flags]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
src=$(cat "$here/source_dir")  # where the tests were built: their TS_SOURCE_DIR (bundle.sh)
if [ "$src" != "$root" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$root" "$src"; fi
mkdir -p "$root/build" && ln -sf "$here/touchstone" "$root/build/touchstone"
export HOME=$(mktemp -d)
python3 -c 'import jsonschema' 2>/dev/null ||
  echo "suite.sh: python3 has no jsonschema here: the tests that check a report against its schema will fail"
n=${TS_SHARDS:-8}
start=$(date +%s)
for i in $(seq 0 $((n - 1))); do
  GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "${TS_SHARD_TIMEOUT:-520}" "$here/touchstone_tests" "$@" \
    > "/tmp/ts-shard-$i.txt" 2>&1 &
done
wait
echo "$n shards in $(( $(date +%s) - start )) s"
status=0
for i in $(seq 0 $((n - 1))); do
  f=/tmp/ts-shard-$i.txt
  summary=$(grep -E '^\[  PASSED  \]' "$f" || echo "did not finish (timed out?)")
  echo "shard $i: $(grep -c '^\[ RUN' "$f") run, $summary"
  grep -q '^\[  PASSED  \]' "$f" && ! grep -q '^\[  FAILED  \]' "$f" || status=1
  [ -n "${OUT:-}" ] && cp "$f" "$OUT/"
done
grep -h '^\[  FAILED  \].*ms)$' /tmp/ts-shard-*.txt | sort -u
grep -h '^\[  SKIPPED \].*ms)$' /tmp/ts-shard-*.txt | sort -u
exit $status
