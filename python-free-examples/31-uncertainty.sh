#!/usr/bin/env bash
#===- 31-uncertainty.sh - How far to trust a prediction -------------------===#
#
# Shows: the 80 % step-time range and the envelope warnings that every
# prediction carries (docs/cost-model.md, Uncertainty). First GPT-3 175B
# on 1024 A100s with the planner's favourite plan (ZeRO-3, context
# parallelism 2) evaluated: its MFU is above any published A100 run's, so a
# warning says it is an extrapolation, and its range comes from the 9
# published tensor-parallel runs without pipelining (none of them ZeRO-3:
# the regime's last attribute is "*"). Then Megatron's own PTD-P plan for
# the same run (tp 8, pp 8), in a regime 19 published runs cover: no
# warning. Last, `trident plan --robust` ranks by the high end of each
# range.
#
# Expected output shape: for each evaluate, the "step time" line, the
# "80% range   LOW - HIGH s  (runs like this one, REGIME, N published, ...)"
# line and any "warning" lines; the --robust table's header with its
# "80% range (s)" column.
#
# Usage: bash python-free-examples/31-uncertainty.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

show() { echo "\$ $*"; }
common=(--model gpt3-175b --cluster dgx-a100-80gb:128 --global-batch 1536
        --seq-len 2048)
zero3=(--dp 256 --tp 2 --cp 2 --micro-batch 3 --zero 3 --sequence-parallel)
show trident evaluate "${common[@]}" "${zero3[@]}"
"$BIN/trident" evaluate "${common[@]}" "${zero3[@]}" |
  grep -E '^(step time|80% range|compute|warning)'
echo
ptdp=(--dp 16 --tp 8 --pp 8 --micro-batch 1 --sequence-parallel
      --recompute selective --zero 1)
show trident evaluate "${common[@]}" "${ptdp[@]}"
"$BIN/trident" evaluate "${common[@]}" "${ptdp[@]}" |
  grep -E '^(step time|80% range|compute|warning)' || true
echo
show trident plan "${common[@]}" --top 3 --robust
"$BIN/trident" plan "${common[@]}" --top 3 --robust | sed -n '5,9p'
