#!/bin/sh
# README "Checking your own kernels", run as written: its sh block, line by line, in a scratch
# directory where gpu/ and build/ are the tree's, then the errors --kernels promises: a kernel that
# does not compile, or declares a tensor the plan lacks, is an ERROR naming the file and line; a file
# naming no kernel is a usage error (exit 2) before any backend opens. Every backend in $3 (comma-separated) must have run.
# Usage: kernels_example.sh SOURCE_DIR TOUCHSTONE BACKENDS
set -u
src=$1 bin=$2 backends=$3
# --kernels replaces Touchstone's kernels: the foreign backends (which run a library's) take no part.
backends=$(echo "$backends" | tr ',' '\n' | grep -xE 'vulkan|webgpu' | paste -sd, -)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
ln -s "$src/gpu" "$work/gpu" && mkdir "$work/build" && ln -s "$bin" "$work/build/touchstone" || exit 1
cd "$work" || exit 1
fail() { echo "FAILED: $*"; exit 1; }

awk '/^### Checking your own kernels/ {s = 1} s && /^```sh/ {b = 1; next} b && /^```/ {exit} b' "$src/README.md" > steps.sh
[ "$(wc -l < steps.sh)" -eq 5 ] || fail "the README's example is not the 5 lines this test knows: $(cat steps.sh)"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  sh -c "$line" > "out$n.txt" 2>&1
  echo "$?" > "rc$n.txt"
  echo "\$ $line  -> exit $(cat rc$n.txt)"
done < steps.sh

# Step 3: the unchanged copies pass on every backend, and the header says they ran.
[ "$(cat rc3.txt)" = 0 ] || fail "pristine copies: $(cat out3.txt)"
grep -q '^kernels: my_kernels (rope_half.comp, rope_half.wgsl)$' out3.txt || fail "no kernels header: $(cat out3.txt)"
# Step 5: the broken copies fail, each backend with a shrunk repro line that names the directory.
[ "$(cat rc5.txt)" = 1 ] || fail "broken copies should exit 1: $(cat out5.txt)"
for b in $(echo "$backends" | tr ',' ' '); do
  grep -q "^rope_half/$b/float16 *40 " out3.txt || fail "$b did not run 40 cases: $(cat out3.txt)"
  grep -q "^FAIL *touchstone repro 'rope_half/.*' --backend $b --kernels 'my_kernels'$" out5.txt ||
    fail "no repro line for $b: $(cat out5.txt)"
done
grep -q "(shrunk in [0-9]* steps from " out5.txt || fail "nothing was shrunk: $(cat out5.txt)"

# A kernel that does not compile: ERROR naming the file and the line, on each backend.
cp gpu/vulkan/shaders/rope_half.comp gpu/webgpu/shaders/rope_half.wgsl my_kernels/
sed -i 's|pc.D / 2u;|pc.D / two;|' my_kernels/rope_half.comp my_kernels/rope_half.wgsl
comp_line=$(grep -n 'two;' my_kernels/rope_half.comp | cut -d: -f1)
wgsl_line=$(grep -n 'two;' my_kernels/rope_half.wgsl | cut -d: -f1)
build/touchstone check --op rope_half,rope_cis --dtype float16 --cases 12 --kernels my_kernels --quiet > nc.txt 2>&1
[ $? = 1 ] || fail "a kernel that does not compile should exit 1: $(cat nc.txt)"
for b in $(echo "$backends" | tr ',' ' '); do  # the other op's cases run and pass: cases pass fail rejected unsupported error
  grep -Eq "^rope_cis/$b/float16 +12 +[0-9]+ +0 +[0-9]+ +0 +0 " nc.txt || fail "rope_cis on $b did not pass: $(cat nc.txt)"
  grep -Eq "^rope_half/$b/float16 +12 +0 +0 +[0-9]+ +0 +[1-9]" nc.txt || fail "rope_half on $b is not ERROR: $(cat nc.txt)"
done
case ",$backends," in *,vulkan,*)
  grep -q "^ERROR .* --backend vulkan" nc.txt && grep -q "my_kernels/rope_half.comp:$comp_line:" nc.txt ||
    fail "no vulkan ERROR naming my_kernels/rope_half.comp:$comp_line: $(cat nc.txt)" ;;
esac
case ",$backends," in *,webgpu,*)
  grep -q "^ERROR .* --backend webgpu" nc.txt && grep -q "my_kernels/rope_half.wgsl:$wgsl_line:" nc.txt ||
    fail "no webgpu ERROR naming my_kernels/rope_half.wgsl:$wgsl_line: $(cat nc.txt)" ;;
esac

# A kernel declaring a tensor the plan does not have: ERROR naming the file and the declaration's line.
cp gpu/vulkan/shaders/rope_half.comp gpu/webgpu/shaders/rope_half.wgsl my_kernels/
sed -i 's/TS_INPUT(x, 0)/TS_INPUT(xx, 0)/; s/\bx_at/xx_at/g' my_kernels/rope_half.comp my_kernels/rope_half.wgsl
decl_comp=$(grep -n 'TS_INPUT(xx, 0)' my_kernels/rope_half.comp | cut -d: -f1)
decl_wgsl=$(grep -n 'TS_INPUT(xx, 0)' my_kernels/rope_half.wgsl | cut -d: -f1)
build/touchstone check --op rope_half --dtype float16 --cases 12 --kernels my_kernels --quiet > nb.txt 2>&1
[ $? = 1 ] || fail "a kernel binding an unknown tensor should exit 1: $(cat nb.txt)"
case ",$backends," in *,vulkan,*)
  grep -q "kernel my_kernels/rope_half.comp binds tensor 'xx' (TS_INPUT(xx, 0) at line $decl_comp)" nb.txt ||
    fail "no vulkan ERROR naming the declaration: $(cat nb.txt)" ;;
esac
case ",$backends," in *,webgpu,*)
  grep -q "kernel my_kernels/rope_half.wgsl line $decl_wgsl declares 'xx'" nb.txt ||
    fail "no webgpu ERROR naming the declaration: $(cat nb.txt)" ;;
esac

# A file that names no built-in kernel: a usage error naming it, before any backend opens.
mv my_kernels/rope_half.comp my_kernels/rope_halff.comp
build/touchstone check --op rope_half --dtype float16 --cases 12 --kernels my_kernels > unknown.txt 2>&1
[ $? = 2 ] || fail "an unknown kernel file should exit 2: $(cat unknown.txt)"
grep -q "my_kernels/rope_halff.comp names no built-in kernel" unknown.txt || fail "unnamed file: $(cat unknown.txt)"
grep -q "rope_half" unknown.txt && ! grep -q "^backend " unknown.txt || fail "backends opened: $(cat unknown.txt)"
echo "kernels example: all good"
