#!/usr/bin/env bash
#===- 33-explore.sh - Which GPUs, how many, what batch, by a deadline ----===#
#
# Sizes a Llama-3-70B run on 1e12 tokens at sequence 8192 over DGX H100
# clusters of 8 to 64 nodes and DGX A100 (80 GB) clusters of 16 to 128
# nodes (docs/explore.md): for each, the planner's best plan with the
# global batch chosen to minimise time to train (McCandlish et al. 2018's
# relation, the critical batch from Kaplan et al. 2020's scaling law),
# then time to train, GPU-hours and cost at $2.50 (H100) and $1.30 (A100)
# per GPU-hour. It answers: the cheapest way to finish within 60 days,
# the fastest within $1M, and the frontier of time against cost.
#
# Expected output shape: the "explore" and "batch" lines, a "deadline"
# line naming the cheapest scenario that meets 60 days, a "budget" line,
# the frontier, then one row per GPU type and node count.
#
# Usage: bash python-free-examples/33-explore.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

args=(--model llama-3-70b --seq-len 8192 --tokens 1e12
      --clusters dgx-h100:8..64,dgx-a100-80gb:16..128
      --price-per-gpu-hour h100=2.5,a100=1.3 --deadline-days 60
      --budget 1e6)
echo "\$ trident explore ${args[*]}"
"$BIN/trident" explore "${args[@]}"
