#!/usr/bin/env bash
#===- 04-evaluate-gpt3.sh - step time and memory of one GPT-3 175B plan --===#
#
# Shows: `trident evaluate --json` on the GPT-3 175B run of Narayanan et
# al. 2021, Table 2 (PTD-P, 1536 A100-80GB GPUs: tp 8, pp 12, dp 16,
# micro-batch 1, global batch 1536, sequence 2048, full recompute, fp16),
# the case `narayanan21_t2_PTD-P_174.6B_1536gpu` of cases.json.
#
# Expected output shape: one JSON object with "model": "gpt3_175b",
# "gpus": 1536, "parallel" {dp 16, tp 8, pp 12, ...},
# "num_micro_batches": 96, "schedule": "1f1b", "iteration_time_s",
# "tokens_per_s_per_gpu", "mfu", "hfu", "memory" {"peak_bytes", "fits":
# true} and a "stages" array of 12 entries (time and memory per stage).
# The exit status is 0 because the plan fits (3 when it does not).
#
# Usage: bash python-free-examples/04-evaluate-gpt3.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

ARGS=(--model gpt3-175b --cluster dgx-a100-80gb:192
      --global-batch 1536 --seq-len 2048
      --tp 8 --pp 12 --dp 16 --micro-batch 1
      --recompute full --precision fp16)
echo "\$ trident evaluate ${ARGS[*]} --json"
"$BIN/trident" evaluate "${ARGS[@]}" --json
