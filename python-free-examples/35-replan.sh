#!/usr/bin/env bash
#===- 35-replan.sh - Re-planning a job that lost or gained nodes ---------===#
#
# Plans Llama-3-70B on 64 DGX H100 nodes (global batch 1024, sequence
# 8192), then re-plans it (docs/elastic.md):
#  1. for 62 nodes (two lost): stay on the old layout with fewer replicas,
#     or move to the best plan for the 496 GPUs left;
#  2. for 80 nodes (sixteen added): stay on 64 of them, or move.
# Each answer gives both sides' step time, the state each must read and
# the time to read it (the nodes' NICs, and a checkpoint store serving
# 100 GB/s), and the steps after which moving has paid for itself.
#
# Expected output shape: per cluster, the "replan", "stay", "move" and
# "break-even" lines.
#
# Usage: bash python-free-examples/35-replan.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

plan=(--model llama-3-70b --cluster dgx-h100:64 --global-batch 1024
      --seq-len 8192 -o "$work/old.json")
echo "\$ trident plan ${plan[*]/#$work/.}"
"$BIN/trident" plan "${plan[@]}" > /dev/null
for nodes in 62 80; do
  args=(--plan "$work/old.json" --cluster "dgx-h100:$nodes"
        --storage-gbps 100)
  echo "\$ trident replan ${args[*]/#$work/.}"
  "$BIN/trident" replan "${args[@]}"
done
