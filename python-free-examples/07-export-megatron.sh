#!/usr/bin/env bash
#===- 07-export-megatron.sh - a plan as Megatron-LM, DeepSpeed, torchtitan ===#
#
# Shows: `trident plan ... --export megatron` printing the best GPT-3 175B
# plan on 128 DGX A100-80GB nodes (1024 GPUs, global batch 1536, sequence
# 2048; README command 1) as Megatron-LM command-line arguments; then the
# plan written with -o exported by `trident export` to a DeepSpeed config
# (a plan pinned to what DeepSpeed runs: no pipeline, sequence or context
# parallelism, full recomputation) and to torchtitan settings (a
# plan pinned to FSDP, ZeRO 3). docs/exporters.md lists every option and
# where its name comes from.
#
# Expected output shape: "# Megatron-LM arguments for gpt3_175b on
# dgx-a100-80gb:128", "# data-parallel size N has no flag ...", then one
# flag per line ending in " \" (--num-layers 96, --tensor-model-parallel-size,
# --pipeline-model-parallel-size, --context-parallel-size,
# --expert-model-parallel-size, ..., --global-batch-size 1536,
# --seq-length 2048, ..., --bf16); then a DeepSpeed JSON object
# ("train_batch_size": 1536, ...) and its "trident: note:" lines; then a torchtitan
# [parallelism] / [training] fragment.
#
# Usage: bash python-free-examples/07-export-megatron.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ARGS=(--model gpt3-175b --cluster dgx-a100-80gb:128
      --global-batch 1536 --seq-len 2048)
echo "\$ trident plan ${ARGS[*]} --export megatron"
"$BIN/trident" plan "${ARGS[@]}" --export megatron

DS=(--fix pp=1,cp=1,sp=0,recompute=full)
echo
echo "\$ trident plan ${ARGS[*]} ${DS[*]} -o ds-plan.json --top 1"
"$BIN/trident" plan "${ARGS[@]}" "${DS[@]}" -o "$tmp/ds-plan.json" --top 1 > /dev/null
echo "\$ trident export --plan ds-plan.json --to deepspeed"
"$BIN/trident" export --plan "$tmp/ds-plan.json" --to deepspeed 2> "$tmp/notes"
cat "$tmp/notes"

TT=(--fix zero=3)
echo
echo "\$ trident plan ${ARGS[*]} ${TT[*]} -o tt-plan.json --top 1"
"$BIN/trident" plan "${ARGS[@]}" "${TT[@]}" -o "$tmp/tt-plan.json" --top 1 > /dev/null
echo "\$ trident export --plan tt-plan.json --to torchtitan"
"$BIN/trident" export --plan "$tmp/tt-plan.json" --to torchtitan
