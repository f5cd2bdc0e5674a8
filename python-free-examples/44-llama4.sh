#!/usr/bin/env bash
#===- 44-llama4.sh - Llama 4 Maverick: import, train plan, serve plan -----===#
#
# Shows: a Llama 4 config.json (Llama4ForConditionalGeneration, the
# language model read from its text_config) imported with its exact
# shapes: 128 routed experts and one shared expert on every second layer,
# dense MLPs between, no RoPE on every fourth layer; then a training plan
# on 32 DGX H100 nodes, the Megatron-LM flags that build the same model,
# and a serving plan on one 8-GPU H200 node.
#
# Expected output shape: the parameter count (400.71 B, 17.18 B active);
# a plan table with dp, tp, pp, ep; the export's --no-rope-freq,
# --moe-layer-freq and --moe-apply-probs-on-input lines; a serving table
# whose first plan meets the 50 ms TPOT target.
#
# Usage: bash python-free-examples/44-llama4.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
M=test/data/models/llama-4-maverick-17b-128e.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "\$ trident inspect --model $M"
"$BIN/trident" inspect --model "$M" 2>/dev/null | grep -E "^(parameters|  active|layers) "
echo "\$ trident plan --model $M --cluster dgx-h100:32 --global-batch 256 --seq-len 4096 --top 3 -o plan.json"
"$BIN/trident" plan --model "$M" --cluster dgx-h100:32 --global-batch 256 \
  --seq-len 4096 --top 3 -o "$tmp/plan.json" 2>/dev/null | sed -n '/^  #/,/^$/p'
echo "\$ trident export --plan plan.json --to megatron --model $M"
"$BIN/trident" export --plan "$tmp/plan.json" --to megatron --model "$M" \
  2>/dev/null | grep -E -- "--(num-experts|no-rope-freq|moe-layer-freq|moe-apply-probs-on-input|moe-shared-expert-intermediate-size|ffn-hidden-size|moe-ffn-hidden-size) "
echo "\$ trident serve --model $M --cluster hgx-h200:1 --input-len 1000 --output-len 2000 --tpot-ms 50 --precision fp8 --top 3"
"$BIN/trident" serve --model "$M" --cluster hgx-h200:1 --input-len 1000 \
  --output-len 2000 --tpot-ms 50 --precision fp8 --top 3 2>/dev/null
