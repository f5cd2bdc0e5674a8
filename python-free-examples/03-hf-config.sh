#!/usr/bin/env bash
#===- 03-hf-config.sh - Hugging Face config.json files, MoE included -----===#
#
# Shows: `trident inspect` on two Hugging Face config.json files from
# test/data/models: Mixtral-8x7B (8 experts, top-2) and DeepSeek-V3
# (multi-head latent attention, 3 dense then 58 MoE layers, 256 routed +
# 1 shared expert, top-8). MoE models print an "active" line: the
# parameters one token touches.
#
# Expected output shape:
#   model mixtral_8x7b: parameters 46702792704, active 12879925248
#   a warning on stderr for DeepSeek-V3's multi-token-prediction layer,
#   then model deepseek_v3: parameters 671026419200, active 37552297472,
#   with two layer rows: layers.0-2 (count 3) and layers.3-60 (count 58).
#
# Usage: bash python-free-examples/03-hf-config.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

for m in mixtral-8x7b deepseek-v3; do
  echo "\$ trident inspect --model test/data/models/$m.json"
  # Warnings go to stderr; merge them so they show in order.
  "$BIN/trident" inspect --model "test/data/models/$m.json" 2>&1
  echo
done
