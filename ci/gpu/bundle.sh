#!/usr/bin/env bash
# Packs what an NVIDIA machine (Ubuntu 24.04, no Vulkan SDK, no Node) needs to run Touchstone built
# here: stripped binaries, SPIRV-Cross, the Vulkan loader + validation layer as Debian packages,
# Node and Dawn (xz). Output: gpu-bundle/ (git-ignored), well under the 64 MiB a device run carries.
set -euo pipefail
cd "$(dirname "$0")/../.."
# TS_BUNDLE_FOREIGN=1: the foreign backends' libraries (ggml-vulkan's worker and libraries, ORT's
# linux-x64 addon) instead of the test binary and Dawn, which together would pass the 64 MiB a run
# carries; =ggml or =ort: one of them. With ggml comes ggml_fa_time (ci/gpu/ggml_fa_time.cpp).
foreign=${TS_BUNDLE_FOREIGN:-0}
case "$foreign" in 0|1|ggml|ort) ;; *) echo "bundle.sh: TS_BUNDLE_FOREIGN must be 0, 1, ggml or ort, got '$foreign'" >&2; exit 2;; esac
out=gpu-bundle
rm -rf "$out" && mkdir -p "$out/debs" "$out/lib" "$out/webgpu/node_modules"
strip -o "$out/touchstone" build/touchstone
# The Dawn workers' Vulkan layer, found beside touchstone (a pass-through on a GPU).
strip -o "$out/libts_roll_loops_layer.so" build/libts_roll_loops_layer.so
cp build/ts_roll_loops_layer.json "$out/"
if [ "$foreign" = 1 ] || [ "$foreign" = ggml ]; then
  mkdir -p "$out/ggml"
  strip -o "$out/ggml/ts_ggml_worker" build/ts_ggml_worker
  libs=gpu/ggml/vendor/linux-x64-vulkan/bins/linux-x64-vulkan
  for l in libggml-base.so libggml-vulkan.so; do xz -T2 -6 -c "$libs/$l" > "$out/ggml/$l.xz"; done
  g++ -O2 -std=c++17 -s ci/gpu/ggml_fa_time.cpp -Ibuild/ggml-include -L"$libs" -lggml-base -lggml-vulkan \
      -o "$out/ggml_fa_time"
fi
if [ "$foreign" = 1 ] || [ "$foreign" = ort ]; then
  mkdir -p "$out/ort"
  cp gpu/ort/package.json "$out/ort/"
  tar -C gpu/ort/node_modules -cf - --exclude='onnxruntime-node/bin/napi-v6/darwin' --exclude='onnxruntime-node/bin/napi-v6/win32' \
      --exclude='onnxruntime-node/bin/napi-v6/linux/arm64' . | xz -T2 -6 > "$out/ort/node_modules.tar.xz"
fi
if [ "$foreign" = 0 ]; then
  # The test binary travels as xz (13 MiB plain would take the bundle past the 64 MiB a run carries);
  # run.sh unpacks it beside touchstone.
  strip -o "$out/touchstone_tests" build/touchstone_tests && xz -T2 -6 "$out/touchstone_tests"
fi
cp -L /usr/lib/x86_64-linux-gnu/libspirv-cross-c-shared.so.0 "$out/lib/"
# OpenBLAS (the references' GEMM) and the Fortran runtime it links: 40 MiB plain, ~5 MiB as xz.
for l in openblas-pthread/libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  xz -T2 -6 -c "/usr/lib/x86_64-linux-gnu/$l" > "$out/lib/$(basename "$l").xz"
done
validation=vulkan-validationlayers
[ "$foreign" != 0 ] && validation=  # room for the foreign libraries: no --validation on such a run
(cd "$out/debs" && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 \
   $validation >/dev/null 2>&1)
if [ "$foreign" = 0 ]; then
  # The report tests' schema check (tests/report_check.py) for a python3 without jsonschema: Debian's
  # pure-Python packages, unpacked by run.sh apart from the system (pyrsistent's C part is for
  # Debian's Python and is skipped elsewhere; its Python part stands in).
  mkdir -p "$out/pydebs"
  (cd "$out/pydebs" && apt-get download python3-jsonschema python3-attr python3-pyrsistent >/dev/null 2>&1)
fi
# xz of node takes minutes on 2 cores: reuse it while node is unchanged.
cache=/tmp/ts-node-$(node --version).xz
[ -f "$cache" ] || xz -T2 -6 -c "$(command -v node)" > "$cache"
cp "$cache" "$out/node.xz"
if [ "$foreign" = 0 ]; then
  cp gpu/webgpu/package.json "$out/webgpu/"
  # Only the linux-x64 addon: the package ships every platform's (130 MiB).
  tar -C gpu/webgpu/node_modules -cf - --exclude='webgpu/dist/[dw]*' --exclude='webgpu/dist/linux-arm64' webgpu \
    | xz -T2 -6 > "$out/webgpu/webgpu.tar.xz"
fi
cp ci/gpu/run.sh ci/gpu/check.sh ci/gpu/suite.sh "$out/"
pwd > "$out/source_dir"  # suite.sh: the tests look for the sources and build/ here
du -sh "$out"
