#!/usr/bin/env bash
#===- 05-plan-gpt3.sh - the fastest GPT-3 175B plans on 1024 A100s -------===#
#
# Shows: `trident plan` searching every parallel configuration of GPT-3
# 175B on 128 DGX A100-80GB nodes (1024 GPUs), global batch 1536,
# sequence 2048 (the setting of Narayanan et al. 2021, README command 1),
# keeping the 3 fastest plans that fit (`--top 3`) and writing the best one
# as a `trident.plan/v1` file (`-o`, docs/plan-schema.md) into a temporary
# directory; then a few fields of that file, read with grep and sed.
#
# Expected output shape: the plan table (header "model gpt3_175b (seq
# 2048, global batch 1536, bf16)", "cluster dgx-a100-80gb:128, 1024 GPUs",
# a "searched N configurations" line, rows #1-#3 with dp tp pp cp ep vpp
# sp, micro-batch x count, recompute, ZeRO stage, step time, tokens/s,
# MFU, memory per GPU), the winner's layer split and "why #1"; then
# "plan file", the schema "trident.plan/v1", the winner's parallel sizes
# ("dp 256 tp 2 pp 1 cp 2" on this tree), micro-batch, recompute, ZeRO
# stage, and its predicted step time, tokens/s, MFU and peak bytes per GPU
# as the unrounded numbers of the file.
#
# Usage: bash python-free-examples/05-plan-gpt3.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ARGS=(--model gpt3-175b --cluster dgx-a100-80gb:128
      --global-batch 1536 --seq-len 2048 --top 3)
echo "\$ trident plan ${ARGS[*]} -o plan.json"
"$BIN/trident" plan "${ARGS[@]}" -o "$tmp/plan.json"

# The value of the first `"KEY": VALUE` line of the plan (numbers and
# strings; the file is pretty-printed, one key per line).
field() {
  grep -m1 "\"$1\":" "$tmp/plan.json" | sed -e 's/^[^:]*: *//' -e 's/,$//' -e 's/"//g'
}
echo
echo "plan file"
echo "  schema            $(field schema)"
echo "  parallel          dp $(field dp) tp $(field tp) pp $(field pp) cp $(field cp) ep $(field ep) vpp $(field vpp) sp $(field sequence_parallel)"
echo "  micro-batch       $(field micro_batch_size) x $(field num_micro_batches)"
echo "  recompute         $(field recompute)"
echo "  zero_stage        $(field zero_stage)"
echo "  schedule          $(field schedule)"
echo "  iteration_time_s  $(field iteration_time_s)"
echo "  tokens_per_s      $(field tokens_per_s)"
echo "  mfu               $(field mfu)"
echo "  peak_memory_bytes $(field peak_memory_bytes)"
