#!/usr/bin/env bash
#===- 15-zero-memory.sh - what each ZeRO stage saves in a running program -===#
#
# Shows the ZeRO stages as emitted programs: tiny-gpt on dp 2 with ZeRO 1,
# 2 and 3 (test/e2e/plans/zero{1,2,3}.json), each trained 3 Adam steps on
# 2 MPI ranks. Every program prints the most tensor memory a rank held at
# once ("memory: peak tensor bytes ..."): ZeRO-1 shards Adam's m and v,
# ZeRO-2 also the gradients (each reduce-scattered into the rank's half
# after its last contribution in a backward), ZeRO-3 also the parameters.
# The script checks that each stage's peak is below the one before, and
# that ZeRO-2 and ZeRO-3 train the same parameters as ZeRO-1.
#
# Expected output shape: for each stage the emit line, three step lines
# and its memory line; then "peaks fall: ..." and the compare tool's "OK"
# lines.
#
# Usage: bash python-free-examples/15-zero-memory.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh

peaks=()
for z in 1 2 3; do
  emit_build "test/e2e/plans/zero$z.json" tiny-gpt "$tmp/zero$z"
  run_ranks 2 "zero$z"
  peaks+=("$(sed -n 's/^memory: peak tensor bytes \([0-9]*\) .*/\1/p' "$tmp/zero$z.log")")
done
if [ "${peaks[1]}" -lt "${peaks[0]}" ] && [ "${peaks[2]}" -lt "${peaks[1]}" ]; then
  echo "peaks fall: ZeRO-1 ${peaks[0]} > ZeRO-2 ${peaks[1]} > ZeRO-3 ${peaks[2]} bytes"
else
  echo "peaks do not fall: ${peaks[*]}" >&2
  exit 1
fi
compare_runs zero1 zero2
compare_runs zero1 zero3
