#!/usr/bin/env bash
# Installs everything Touchstone needs on Debian 12 (bookworm), as root. Idempotent: when every
# package is present it only checks (no apt-get update), so a re-run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake ninja-build pkg-config git
      libvulkan-dev libvulkan-volk-dev glslang-dev glslang-tools spirv-tools
      libspirv-cross-c-shared-dev libeigen3-dev libopenblas-dev librapidcheck-dev libgtest-dev
      nlohmann-json3-dev libssl-dev libcli11-dev vulkan-validationlayers vulkan-tools
      clang libclang-rt-14-dev python3-numpy python3-jsonschema)

missing=()
# Node.js (for Dawn): Debian's nodejs+npm, unless a node with npm is already on PATH (e.g. NodeSource's
# nodejs, which bundles npm and conflicts with Debian's npm package).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then PKGS+=(nodejs npm); fi
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Dawn needs Mesa >= 25 (lavapipe from bookworm-backports); bookworm's own Mesa 22 is refused.
mesa_ver=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
need_mesa=1
case "$mesa_ver" in 25.*|26.*|27.*) need_mesa=0 ;; esac

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ] || [ $need_mesa = 1 ]; then
  if [ ! -f /etc/apt/sources.list.d/backports.sources ]; then
    cat > /etc/apt/sources.list.d/backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  apt-get update -qq
  [ ${#missing[@]} -gt 0 ] && apt-get install -y -qq --no-install-recommends "${missing[@]}"
  [ $need_mesa = 1 ] && apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers
fi

# Dawn (WebGPU) as a Node addon, pinned by gpu/webgpu/package-lock.json.
if [ -f gpu/webgpu/package.json ] && [ ! -f gpu/webgpu/node_modules/webgpu/package.json ]; then
  (cd gpu/webgpu && npm ci --no-audit --no-fund --loglevel=error)
fi

# ggml-vulkan (gpu/ggml): llama.cpp's ggml Vulkan libraries as npm @node-llama-cpp/linux-x64-vulkan
# ships them, and the headers of the exact source that built them (node-llama-cpp's git bundle).
# Only the two tarballs are fetched (npm pack: no dependencies, no install scripts), pinned by
# version and checked against their SHA-256, and unpacked into gpu/ggml/vendor.
ggml_vendor=gpu/ggml/vendor
ggml_fetch() {  # package version sha256 dest [member]
  local tgz
  [ -e "$ggml_vendor/$4/.done" ] && return 0
  tgz=$(cd "$ggml_vendor" && npm pack --silent "$1@$2")
  echo "$3  $ggml_vendor/$tgz" | sha256sum -c --quiet - || { echo "setup: $1@$2 does not match its pinned SHA-256" >&2; exit 1; }
  rm -rf "${ggml_vendor:?}/$4" && mkdir -p "$ggml_vendor/$4"
  tar xzf "$ggml_vendor/$tgz" -C "$ggml_vendor/$4" --strip-components=1 ${5:+"package/$5"}
  rm -f "$ggml_vendor/$tgz"
  touch "$ggml_vendor/$4/.done"
}
mkdir -p "$ggml_vendor"
ggml_fetch @node-llama-cpp/linux-x64-vulkan 3.21.1 4877be47f01586481615aec277c23c7f660592ce66eec2753ff1dcc967a9a0d2 linux-x64-vulkan
ggml_fetch node-llama-cpp 3.21.1 7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f node-llama-cpp llama/gitRelease.bundle

# ort-webgpu (gpu/ort): ONNX Runtime with its WebGPU execution provider, pinned by
# gpu/ort/package-lock.json. Its postinstall would fetch CUDA providers: told to skip that.
if [ ! -f gpu/ort/node_modules/onnxruntime-node/package.json ]; then
  (cd gpu/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi
