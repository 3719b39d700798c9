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
mkdir -p /tmp/ts-webgpu/node_modules && tar -C /tmp/ts-webgpu/node_modules -xJf "$here/webgpu/webgpu.tar.xz"
cp "$here/webgpu/package.json" /tmp/ts-webgpu/
export TOUCHSTONE_NODE=/tmp/ts-node/node TOUCHSTONE_WEBGPU_DIR=/tmp/ts-webgpu
"$@"
