#!/usr/bin/env bash
#===- 43-cp-comm-type.sh - three ways to exchange K and V under cp --------===#
#
# Shows: Llama-3 70B at a 32,768-token sequence on 64 DGX H100 nodes with
# context parallelism 4 (tp 2, pp 8), priced by `trident evaluate` with
# each of Megatron-Core's --cp-comm-type kinds: p2p (ring attention, each
# step hidden behind an attention block), allgather (K and V gathered
# before the attention, as the programs `trident emit` writes do) and a2a
# (DeepSpeed-Ulysses: all-to-alls to a head split and back); then the
# planner with a2a pinned and the Megatron-LM flag its export writes.
#
# Expected output shape: three "step time" lines and three "stage 0" rows,
# the exposed communication (the fourth column) growing from p2p to
# allgather to a2a, and the compute (the third column) highest under p2p,
# whose ring steps run the fused attention kernel on a quarter of the keys
# at a time (flashLengthEfficiency), so p2p's step time is now the
# longest; the plan's "cp_comm_type": "a2a"; the export's
# "--cp-comm-type a2a" line.
#
# Usage: bash python-free-examples/43-cp-comm-type.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for kind in p2p allgather a2a; do
  echo "\$ trident evaluate --model llama-3-70b --cluster dgx-h100:64 --seq-len 32768 ... --tp 2 --pp 8 --cp 4 --cp-comm-type $kind"
  "$BIN/trident" evaluate --model llama-3-70b --cluster dgx-h100:64 \
    --global-batch 512 --seq-len 32768 --tp 2 --pp 8 --dp 8 --cp 4 \
    --micro-batch 1 --zero 1 --sequence-parallel --recompute full \
    --cp-comm-type "$kind" | grep -E "^(step time|    0 )"
done
echo "\$ trident plan --model llama-3-70b --cluster dgx-h100:64 --global-batch 512 --seq-len 32768 --fix cp_comm_type=a2a,cp=4 -o plan.json"
"$BIN/trident" plan --model llama-3-70b --cluster dgx-h100:64 \
  --global-batch 512 --seq-len 32768 --fix cp_comm_type=a2a,cp=4 --top 1 \
  -o "$tmp/plan.json" > /dev/null
grep -E '"(cp|cp_comm_type)"' "$tmp/plan.json" | tr -d ' ,'
echo "\$ trident export --plan plan.json --to megatron"
"$BIN/trident" export --plan "$tmp/plan.json" --to megatron | grep -E -- "--(context-parallel-size|cp-comm-type)"
