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
