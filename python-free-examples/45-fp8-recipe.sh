#!/usr/bin/env bash
#===- 45-fp8-recipe.sh - FP8 scaling recipes priced and exported ---------===#
#
# Shows: Llama-3 70B in FP8 on 8 DGX H100 nodes (tp 8, pp 2, dp 4), priced
# by `trident evaluate` with each of Megatron-Core's --fp8-recipe choices
# that Hopper runs: delayed (the default: scales from earlier steps' amax
# history), tensorwise (current scaling: an amax pass over every quantised
# tensor first) and blockwise (DeepSeek-V3's block scales, reduced in the
# cast); mxfp8 refused on H100 and priced on B200; then the planner with
# tensorwise pinned and the flags its exports write.
#
# Expected output shape: three "step time" lines, tensorwise the slowest
# and blockwise equal to delayed; an error naming H100-SXM5-80GB for
# mxfp8; a B200 "step time" line; the plan's "fp8_recipe": "tensorwise";
# Megatron-LM's "--fp8-recipe tensorwise" and Megatron-Bridge's
# "mixed_precision=bf16_with_fp8_current_scaling_mixed".
#
# Usage: bash python-free-examples/45-fp8-recipe.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--model llama-3-70b --global-batch 64 --seq-len 8192 --tp 8 --pp 2
  --dp 4 --micro-batch 1 --zero 1 --sequence-parallel --precision fp8)
for recipe in delayed tensorwise blockwise; do
  echo "\$ trident evaluate --cluster dgx-h100:8 ... --precision fp8 --fp8-recipe $recipe"
  "$BIN/trident" evaluate --cluster dgx-h100:8 "${flags[@]}" \
    --fp8-recipe "$recipe" | grep -E "^step time"
done
echo "\$ trident evaluate --cluster dgx-h100:8 ... --precision fp8 --fp8-recipe mxfp8"
if "$BIN/trident" evaluate --cluster dgx-h100:8 "${flags[@]}" \
    --fp8-recipe mxfp8 > /dev/null 2> "$tmp/err"; then
  echo "unexpected: mxfp8 accepted on H100" >&2
  exit 1
fi
cat "$tmp/err"
echo "\$ trident evaluate --cluster dgx-b200:8 ... --precision fp8 --fp8-recipe mxfp8"
"$BIN/trident" evaluate --cluster dgx-b200:8 "${flags[@]}" \
  --fp8-recipe mxfp8 | grep -E "^step time"
echo "\$ trident plan --model llama-3-70b --cluster dgx-h100:8 --global-batch 64 --seq-len 8192 --precision fp8 --fix fp8_recipe=tensorwise -o plan.json"
"$BIN/trident" plan --model llama-3-70b --cluster dgx-h100:8 \
  --global-batch 64 --seq-len 8192 --precision fp8 \
  --fix fp8_recipe=tensorwise --top 1 -o "$tmp/plan.json" > /dev/null
grep -E '"(precision|fp8_recipe)"' "$tmp/plan.json" | tr -d ' ,'
echo "\$ trident export --plan plan.json --to megatron"
"$BIN/trident" export --plan "$tmp/plan.json" --to megatron | grep -E -- "--fp8-"
echo "\$ trident export --plan plan.json --to megatron-bridge"
"$BIN/trident" export --plan "$tmp/plan.json" --to megatron-bridge | grep -E "mixed_precision="
