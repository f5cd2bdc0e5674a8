#!/usr/bin/env bash
#===- 25-gpu-bundle.sh - what a bare GPU machine needs, made here ---------===#
#
# The lent GPU machine has nvcc but no MLIR tools, MPI or Eigen, and no
# package registry. scripts/gpu-bundle.sh makes here what it cannot: Open
# MPI and Eigen as Debian packages, every end-to-end program of
# scripts/gpu-check.sh emitted for CUDA (and its reference for the CPU),
# the one-GPU benchmarks planned and emitted; scripts/gpu-device.sh does
# the rest there (docs/runtime.md, "On the lent GPU machine"). This
# example
#  1. makes the bundle without the packages (--no-debs: nothing is
#     downloaded) into a temporary folder and lists what is in it;
#  2. runs one bundled program the way the device does, through
#     test/e2e/run-e2e.sh --bundle-in: taken from the bundle instead of
#     `trident emit`, compiled and run here on the CPU runtime, and held
#     to its own single-rank run;
#  3. shows how ctest's GPU tests decide (test/e2e/gpu-gate.sh: skipped
#     with exit 77 where nvidia-smi lists no GPU, run where it does) and
#     what e2e-cuda runs on a GPU machine (test/e2e/cuda-e2e.sh
#     --dry-run: the Adam and SGD plans on the CUDA runtime against the
#     CPU runtime's single-rank runs).
#
# Expected output shape: the bundle's lines ("emitted 22 cuda programs and
# 11 cpu references", "emitted 6 ...", the bf16 plans' "emitted 7 ...",
# four "planned and emitted" lines,
# its size); the program counts per folder; then run-e2e's table with a
# "reference" row and a "match" row for tiny-llama-single; the gate's
# line and its exit status (77 here, without a GPU); two run-e2e.sh
# command lines.
#
# Usage: bash python-free-examples/25-gpu-bundle.sh
#        (needs mpirun; TRIDENT_BIN as in example 01: the build directory
#        is the one above it, whose lib/ holds the runtime archive)
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
BUILD=$(cd "$BIN/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# 1. The bundle, without the Debian packages"
echo "\$ bash scripts/gpu-bundle.sh --no-debs --out bundle"
bash scripts/gpu-bundle.sh --build-dir "$BUILD" --no-debs --out "$tmp/bundle" |
  sed "s|$tmp/||g"
for d in "$tmp"/bundle/e2e/*/*; do
  echo "${d#"$tmp/"}: $(ls "$d" | wc -l) programs"
done

echo
echo "# 2. One bundled program through run-e2e.sh --bundle-in (CPU runtime)"
echo "\$ bash test/e2e/run-e2e.sh --bundle-in bundle/e2e tiny-llama-single"
bash test/e2e/run-e2e.sh --build-dir "$BUILD" --work "$tmp/work" \
  --bundle-in "$tmp/bundle/e2e" tiny-llama-single

echo
echo "# 3. ctest's GPU tests: the gate, and what e2e-cuda runs on a GPU"
echo "\$ bash test/e2e/gpu-gate.sh true"
set +e
bash test/e2e/gpu-gate.sh true
rc=$?
set -e
echo "exit status $rc"
echo "\$ bash test/e2e/cuda-e2e.sh --build-dir build --dry-run"
bash test/e2e/cuda-e2e.sh --build-dir "$BUILD" --dry-run |
  sed "s|$BUILD|build|g; s|$(pwd)/||g"
