#!/usr/bin/env bash
#===- 01-inspect-gpt3.sh - parameters, layers and FLOPs of GPT-3 175B -----===#
#
# Shows: `trident inspect` on the built-in zoo model gpt3-175b (Brown et al.
# 2020 shape, Megatron vocabulary 51,200 and sequence 2048), first as text,
# then as JSON.
#
# Expected output shape:
#   model         gpt3_175b (GPT2LMHeadModel)
#   sequence      2048
#   parameters    174615846912 (174.62 B)
#   ... one line per parameter kind, layers 96, FLOPs per token and sequence
#   layer  count  params  fwd FLOPs/seq  train FLOPs  act (none)  act (sel.)
#   embedding / layers.0-95 (count 96) / head
#   then a JSON object with "params": 174615846912, "layers": 96,
#   "flops_per_token" {forward, train} and a "per_layer" array.
#
# Usage: bash python-free-examples/01-inspect-gpt3.sh
#        (TRIDENT_BIN=<dir holding trident> to use another build)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

echo "\$ trident inspect --model gpt3-175b"
"$BIN/trident" inspect --model gpt3-175b

echo
echo "\$ trident inspect --model gpt3-175b --json"
"$BIN/trident" inspect --model gpt3-175b --json
