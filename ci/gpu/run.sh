#!/usr/bin/env bash
# Runs on the NVIDIA machine from a checkout that carries gpu-bundle/: installs the Vulkan loader
# (ENVIRONMENT.md's recipe), unpacks Node and Dawn, then runs the command given, e.g.
#   bash gpu-bundle/run.sh ./gpu-bundle/touchstone check
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for d in "$here"/debs/*.deb; do dpkg -x "$d" /; done
ldconfig
[ -f "$here/touchstone_tests.xz" ] && xz -dc "$here/touchstone_tests.xz" > "$here/touchstone_tests" && chmod +x "$here/touchstone_tests"
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/ts-lib && for f in "$here"/lib/*.xz; do xz -dc "$f" > "/tmp/ts-lib/$(basename "$f" .xz)"; done
export LD_LIBRARY_PATH="$here/lib:/tmp/ts-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p /tmp/ts-node && xz -dc "$here/node.xz" > /tmp/ts-node/node && chmod +x /tmp/ts-node/node
if [ -f "$here/webgpu/webgpu.tar.xz" ]; then
  mkdir -p /tmp/ts-webgpu/node_modules && tar -C /tmp/ts-webgpu/node_modules -xJf "$here/webgpu/webgpu.tar.xz"
  cp "$here/webgpu/package.json" /tmp/ts-webgpu/
  export TOUCHSTONE_WEBGPU_DIR=/tmp/ts-webgpu
fi
export TOUCHSTONE_NODE=/tmp/ts-node/node
# jsonschema for the report tests, only where python3 has none (bundle.sh): never over the system's.
if [ -d "$here/pydebs" ] && ! python3 -c 'import jsonschema' 2>/dev/null; then
  for d in "$here"/pydebs/*.deb; do dpkg -x "$d" /tmp/ts-py; done
  export PYTHONPATH="/tmp/ts-py/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}"
fi
# The foreign backends (bundle.sh with TS_BUNDLE_FOREIGN=1): ggml's libraries beside its worker, ORT's
# node_modules (its worker script is embedded in touchstone).
if [ -d "$here/ggml" ]; then
  for f in "$here"/ggml/*.xz; do xz -dc "$f" > "/tmp/ts-lib/$(basename "$f" .xz)"; done
  export TOUCHSTONE_GGML_WORKER="$here/ggml/ts_ggml_worker"
fi
if [ -d "$here/ort" ]; then
  mkdir -p /tmp/ts-ort/node_modules && tar -C /tmp/ts-ort/node_modules -xJf "$here/ort/node_modules.tar.xz"
  cp "$here/ort/package.json" /tmp/ts-ort/
  export TOUCHSTONE_ORT_DIR=/tmp/ts-ort
fi
"$@"
