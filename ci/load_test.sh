#!/usr/bin/env bash
# The gate on a busy CI runner: a part of the default sweep, with every cache cold, runs once on an
# idle machine and once beside two CPU-bound processes. Both runs must end with a verdict (no
# crash), hold no ERROR, and give every case the same outcome. Slow compiles under load have their
# own budget (--compile-timeout-ms), so a busy neighbour never turns into a kernel ERROR.
#   ci/load_test.sh [BUILD_DIR] [extra check arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; shift || true
args=(--op rope_llama,sdpa --dtype float16 --cases 24 --backend "${TS_BACKENDS:-vulkan,webgpu}" "$@")
work=$(mktemp -d)
hogs=()
cleanup() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Cold: no Mesa shader cache, and a home of its own (Dawn's and the NVIDIA driver's caches).
run() {
  local name=$1
  mkdir -p "$work/$name-home"
  local rc=0
  HOME="$work/$name-home" XDG_CACHE_HOME="$work/$name-home/.cache" MESA_SHADER_CACHE_DISABLE=true \
    "$build/touchstone" check "${args[@]}" --quiet --json "$work/$name.json" > "$work/$name.log" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "load test: the $name run ended with exit $rc (no verdict):"; tail -30 "$work/$name.log"; exit 1
  fi
  echo "load test: $name run: exit $rc, $(grep -E 'case runs in' "$work/$name.log")"
}

run idle
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
run loaded

python3 - "$work/idle.json" "$work/loaded.json" <<'PY'
import json, sys
idle, loaded = (json.load(open(p)) for p in sys.argv[1:3])
def outcomes(r): return {(c["id"], c["backend"]): c["outcome"] for c in r["cases"]}
a, b = outcomes(idle), outcomes(loaded)
bad = []
for name, o in (("idle", a), ("loaded", b)):
    errors = [k for k, v in o.items() if v == "ERROR"]
    if errors: bad.append(f"{name}: {len(errors)} ERROR, first {errors[0]}")
if a.keys() != b.keys(): bad.append(f"the runs hold different cases ({len(a)} idle, {len(b)} loaded)")
diff = [k for k in a.keys() & b.keys() if a[k] != b[k]]
if diff: bad.append(f"{len(diff)} cases changed outcome under load, first {diff[0]}: {a[diff[0]]} -> {b[diff[0]]}")
if bad: sys.exit("load test FAILED: " + "; ".join(bad))
print(f"load test: {len(a)} case runs, the same outcomes idle and loaded, no ERROR")
PY
