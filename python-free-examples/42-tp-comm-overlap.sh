#!/usr/bin/env bash
#===- 42-tp-comm-overlap.sh - tensor-parallel collectives behind the GEMMs ===#
#
# Shows: Llama-3 70B on eight DGX H100 nodes with tensor parallelism 8,
# two pipeline stages and sequence parallelism, priced by `trident
# evaluate` without and with --tp-comm-overlap (Megatron-Core's
# --tp-comm-overlap: Transformer Engine overlaps each tensor-parallel
# all-gather and reduce-scatter with the GEMM beside it, its communication
# kernels taking 16 of the GPU's SMs from some of those GEMMs). Then the
# planner, which chooses the overlap where it pays (the sp column's "ov"),
# and the Megatron-LM flag its export writes. No published run of
# shared/validation states the overlap, so its price is not validated and
# the plan says so (docs/planner.md).
#
# Expected output shape: two "step time" lines and two "stage 0" rows
# (compute, exposed communication, ...), the second with more compute and
# far less exposed communication; the plan's row with "ov" and the
# warning that no validated run used the overlap; the plan's
# "tp_comm_overlap": true; the export's "--tp-comm-overlap" line.
#
# Usage: bash python-free-examples/42-tp-comm-overlap.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for how in "" "--tp-comm-overlap"; do
  echo "\$ trident evaluate --model llama-3-70b --cluster dgx-h100:8 ... --tp 8 --pp 2 --sequence-parallel $how"
  # shellcheck disable=SC2086
  "$BIN/trident" evaluate --model llama-3-70b --cluster dgx-h100:8 \
    --global-batch 64 --seq-len 8192 --tp 8 --pp 2 --dp 4 --micro-batch 1 \
    --zero 1 --sequence-parallel $how | grep -E "^(step time|    0 )"
done
echo "\$ trident plan --model llama-3-70b --cluster dgx-h100:8 --global-batch 64 --seq-len 8192 --fix tp=8,pp=2 --top 1 -o plan.json"
"$BIN/trident" plan --model llama-3-70b --cluster dgx-h100:8 --global-batch 64 \
  --seq-len 8192 --fix tp=8,pp=2 --top 1 -o "$tmp/plan.json" |
  grep -E "^ +(#|1) |^sp ov|tp_comm_overlap"
grep -E '"(sequence_parallel|tp_comm_overlap)"' "$tmp/plan.json" | tr -d ' ,'
echo "\$ trident export --plan plan.json --to megatron"
"$BIN/trident" export --plan "$tmp/plan.json" --to megatron | grep -E -- "--(sequence-parallel|tp-comm-overlap)"
