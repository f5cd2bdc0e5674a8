#!/usr/bin/env bash
#===- 07-export-megatron.sh - a plan as Megatron-LM, DeepSpeed, torchtitan ===#
#
# Shows: `trident plan ... --export megatron` printing the best GPT-3 175B
# plan on 128 DGX A100-80GB nodes (1024 GPUs, global batch 1536, sequence
# 2048; README command 1) as Megatron-LM command-line arguments; then
# `--export deepspeed`, which ranks only plans DeepSpeed can run (the best
# of all uses context parallelism, which it lacks: a note says what that
# costs); then `--export torchtitan`, refused (torchtitan has no GPT-3), and
# Llama-3-70B's best torchtitan plan written with `-o tt-plan.json` and
# exported again by `trident export`. docs/exporters.md lists every option
# and where its name comes from.
#
# Expected output shape: "# Megatron-LM arguments for gpt3_175b on
# dgx-a100-80gb:128", "# data-parallel size N has no flag ...", then one
# flag per line ending in " \" (--num-layers 96, --tensor-model-parallel-size,
# --pipeline-model-parallel-size, --context-parallel-size,
# --expert-model-parallel-size, ..., --global-batch-size 1536,
# --seq-length 2048, ..., --bf16, then GPT-3's architecture: --hidden-size
# 12288, ..., --load "${CHECKPOINT_DIR:?...}"); then a DeepSpeed JSON object
# ("train_micro_batch_size_per_gpu": 1, ..., "autotp_size": 2) and its
# "trident: note:" lines, the first naming the faster plan DeepSpeed cannot
# run, a later one why train_batch_size is left out; then torchtitan's
# refusal (it has no GPT-3: "its closest is llama3 405B"); then Llama-3-70B
# on 64 DGX H100 nodes as a torchtitan configuration module (apply_plan,
# then trident_plan() on llama3_70b()), whose header names torchtitan's
# llama3 70B and the launch command.
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

echo
echo "\$ trident plan ${ARGS[*]} --export deepspeed"
"$BIN/trident" plan "${ARGS[@]}" --export deepspeed 2> "$tmp/notes"
cat "$tmp/notes"

echo
echo "\$ trident plan ${ARGS[*]} --export torchtitan"
"$BIN/trident" plan "${ARGS[@]}" --export torchtitan 2>&1 || true

LLAMA=(--model llama-3-70b --cluster dgx-h100:64 --global-batch 1024
       --seq-len 8192)
echo
echo "\$ trident plan ${LLAMA[*]} --export torchtitan -o tt-plan.json"
"$BIN/trident" plan "${LLAMA[@]}" --export torchtitan -o "$tmp/tt-plan.json" > /dev/null
echo "\$ trident export --plan tt-plan.json --to torchtitan"
"$BIN/trident" export --plan "$tmp/tt-plan.json" --to torchtitan
