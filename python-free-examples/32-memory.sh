#!/usr/bin/env bash
#===- 32-memory.sh - Memory the way the runs that really ran had it -------===#
#
# Shows the memory model (docs/cost-model.md, Memory) on a run that really
# ran: NVIDIA's Nemotron-4 340B on 128 H100s (tp 8, pp 8, vpp 12, dp 2,
# ZeRO-1; the DGX Cloud benchmark of shared/validation, run with NeMo). The
# model file is the case's config (python-free-examples/models/
# nemotron-4-340b.json: public Nemotron-4 340B shape, squared-ReLU MLP,
# LayerNorm1p, RoPE on half the head dimension).
#  1. Under the megatron-core preset (Megatron-Core's distributed optimizer:
#     fp32 master weights, 12 optimizer bytes per parameter) the last
#     stage does not fit the 85.5 GB an H100 reports (81,559 MiB).
#  2. Under the nemo preset (NeMo 1.x: Apex's DistributedFusedAdam keeps
#     the master weights as 16-bit remainders of the bf16 weights, 10
#     bytes) it fits, as the real run did.
#  3. With the published runs at hand (../shared/validation, or the cases
#     file given as $1), `trident validate`'s last line: how many of the
#     runs, all of which ran, the model lets fit, and the least room.
#
# Expected output shape: two "memory" lines ("does not fit: stage 7 needs
# ... of 85.5 GB (..., optimizer 34.6 GB, ...)", then "fits: ...
# optimizer 28.9 GB ..."), then "memory: N of N runs predicted to fit".
#
# Usage: bash python-free-examples/32-memory.sh [cases.json]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
CASES=${1:-../shared/validation/cases.json}

run=(--model python-free-examples/models/nemotron-4-340b.json
     --cluster dgx-h100:16 --global-batch 32 --seq-len 4096 --tp 8 --pp 8
     --dp 2 --vpp 12 --micro-batch 1 --sequence-parallel --zero 1)
for rt in megatron-core nemo; do
  echo "\$ trident evaluate ${run[*]} --runtime $rt"
  # The first prints the breakdown, then exits 3 (does not fit).
  "$BIN/trident" evaluate "${run[@]}" --runtime "$rt" 2>/dev/null |
    grep -E '^(runtime|memory)' || true
  echo
done

if [[ -f "$CASES" ]]; then
  echo "\$ trident validate --cases $CASES | tail -1"
  "$BIN/trident" validate --cases "$CASES" | tail -1
fi
