#!/usr/bin/env bash
#===- 31-uncertainty.sh - How far to trust a prediction -------------------===#
#
# Shows: the 80 % step-time range and the envelope warnings that every
# prediction carries (docs/cost-model.md, Uncertainty). First GPT-3 175B
# on 1024 A100s with a plan a hair slower than the planner's favourite
# (tp 2, pp 4 interleaved, context parallelism 4, ZeRO-2; the favourite
# has tp 4 and cp 2) evaluated: its MFU is above any published
# A100 run's and no published run used cp 4, so two warnings say it is an
# extrapolation; its range comes from the 19 published tensor- and
# pipeline-parallel runs without ZeRO-3. Then Megatron's own PTD-P plan for
# the same run (tp 8, pp 8), in the same regime: no warning. Last,
# `trident plan --robust` ranks by the high end of each range: the ZeRO-3
# plans without pipelining come first there, since the 9 published runs
# like them all ran faster than predicted.
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
best=(--dp 32 --tp 2 --pp 4 --cp 4 --vpp 12 --micro-batch 3 --zero 2
      --sequence-parallel)
show trident evaluate "${common[@]}" "${best[@]}"
"$BIN/trident" evaluate "${common[@]}" "${best[@]}" |
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
