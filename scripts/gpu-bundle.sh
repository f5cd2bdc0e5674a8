#!/usr/bin/env bash
#===- scripts/gpu-bundle.sh - What the lent GPU machine needs, made here --===#
#
# Usage: scripts/gpu-bundle.sh [--build-dir DIR] [--out DIR] [--no-debs]
#
# The lent GPU machine (the `device` tool's nvidia-h200) has nvcc, CMake
# and ninja but no MLIR, no MPI, no Eigen and no package registry, so
# scripts/gpu-check.sh cannot build there. This script, run on a machine
# with the full build (default build directory `build`), prepares in DIR
# (default .gpu-bundle, ignored by git, carried to the device with `run`'s
# `carry`) everything scripts/gpu-device.sh needs there:
#
#   debs/          Open MPI 4.1 and its libraries, Eigen's headers: the
#                  Debian packages themselves (apt-get download), unpacked
#                  on the device into a private prefix (no root paths);
#   e2e/           the CUDA end-to-end programs of gpu-check.sh's plans and
#                  the CPU programs of their single-rank references,
#                  emitted by `trident emit` (test/e2e/run-e2e.sh
#                  --bundle-out): the device compiles and runs them;
#   bench/         the one-GPU benchmarks (gpt-1b, mixtral-small) planned
#                  for one H200 and emitted (scripts/gpu-bench.sh
#                  --bundle-out);
#   commit         the commit it was made from (gpu-device.sh prints it,
#                  and warns where git there names another).
#
# --no-debs leaves debs/ out (the tests; a device run then stops early,
# naming what is missing). Exit: 0 done; 1 a step failed; 2 bad usage.
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build" out="$root/.gpu-bundle" debs=1
usage() { sed -n '4p' "$0" | sed 's/^# //'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
    --no-debs) debs=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-bundle: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for f in "$build/bin/trident"; do
  [ -x "$f" ] || { echo "gpu-bundle: $f is not built (scripts/build.sh)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Open MPI as Debian 12 packages it (the project's MPI, docs/runtime.md),
# with the libraries the device image may lack, and Eigen for the CPU
# runtime the references run on. The device's own C and C++ runtimes,
# zlib, libudev and libuuid are used as they are.
packages=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2
          libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1
          libucx0 libpsm-infinipath1 libpsm2-2 libibverbs1 librdmacm1
          libnl-3-200 libnl-route-3-200 libnuma1 libmunge2 libeigen3-dev)
if [ "$debs" = 1 ]; then
  rm -rf "$out/debs"
  mkdir -p "$out/debs"
  # apt-get download writes into the current directory.
  (cd "$out/debs" && apt-get download "${packages[@]}" > "$out/debs.log" 2>&1) ||
    { echo "gpu-bundle: apt-get download failed (see $out/debs.log)" >&2; exit 1; }
  echo "gpu-bundle: $(ls "$out/debs" | wc -l) packages in $out/debs ($(du -sh "$out/debs" | cut -f1))"
fi

# The end-to-end programs: gpu-check.sh's plan lists.
plans=$("$root/scripts/gpu-check.sh" --list-plans)
adam=$(awk '$1 == "adam" { print $2 }' <<< "$plans")
sgd=$(awk '$1 == "sgd" { print $2 }' <<< "$plans")
mkdir -p "$out/e2e"
# shellcheck disable=SC2086 # one plan name per word
bash "$root/test/e2e/run-e2e.sh" --build-dir "$build" --backend cuda \
  --reference-backend cpu --bundle-out "$out/e2e" $adam
# shellcheck disable=SC2086
bash "$root/test/e2e/run-e2e.sh" --build-dir "$build" --backend cuda \
  --reference-backend cpu --optimizer sgd --lr 1 --bundle-out "$out/e2e" $sgd

# bf16 mixed precision (docs/emit.md): the plans of ctest's
# e2e-cuda-emu-bf16 and three more, losses held to the CPU runtime's fp32
# and bf16 single-rank runs.
bash "$root/test/e2e/run-e2e.sh" --build-dir "$build" --backend cuda \
  --reference-backend cpu --precision bf16 --bundle-out "$out/e2e" \
  dp2-tp2-pp2 zero3 tiny-llama-cp2-tp2-sp tiny-deepseek-moe-dp2-ep2-tp2-sp-etp \
  recompute-selective-pp2 tiny-bert-cp2-pp2 \
  tiny-mixtral-dp4-ep2-zero3 tiny-vit-dp2-tp2-sp tiny-gpt-oss-dp2-ep2-tp2-sp-etp

# The benchmarks, as gpu-check.sh runs them, for the lent H200; then the
# bf16 programs of gpt-1b and the Llama-style ~1B (bench/models/llama-1b.json)
# that the PyTorch reference (bench/torch_reference.py) also trains.
rm -rf "$out/bench"
bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
  --gpu h200 --bundle-out "$out/bench/gpt-1b"
bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
  --gpu h200 --precision bf16 --bundle-out "$out/bench/gpt-1b-bf16"
bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
  --gpu h200 --precision bf16 --model "$root/bench/models/llama-1b.json" \
  --bundle-out "$out/bench/llama-1b-bf16"
# gpt-1b in bf16 under selective recomputation, which gpu-device.sh runs
# with the unfused and the fused attention forward.
bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
  --gpu h200 --precision bf16 --recompute selective \
  --bundle-out "$out/bench/gpt-1b-bf16-selective"
bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
  --gpu h200 --model "$root/bench/models/mixtral-small.json" --seq-len 256 \
  --global-batch 8 --micro-batch 2 --bundle-out "$out/bench/mixtral-small"

git -C "$root" rev-parse HEAD > "$out/commit" 2>/dev/null || echo unknown > "$out/commit"
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)) from commit $(cat "$out/commit")"
