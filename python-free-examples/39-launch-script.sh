#!/usr/bin/env bash
#===- 39-launch-script.sh - a plan as a Slurm job that launches Megatron-LM ===#
#
# Shows: a plan made from a Hugging Face config.json (Llama-3-8B's, from
# test/data/models) records the file's path and SHA-256 (`model_source`), so
# `trident export` finds the model without --model; `--launcher slurm` then
# writes an sbatch script for the plan's 4 nodes x 8 GPUs that runs
# Megatron-LM's pretrain_gpt.py under torchrun with every argument. The
# script is dry-run against stand-ins for srun, scontrol and torchrun
# (test/tools/Inputs/fake-launch), which print what they were given. Last,
# the config edited after planning is refused.
#
# Expected output shape: the script ("#!/bin/bash", "#SBATCH --nodes=4",
# "#SBATCH --gpus-per-node=8", the prediction comments, "export
# CUDA_DEVICE_MAX_CONNECTIONS=1", "srun ... torchrun --nnodes
# "$SLURM_NNODES" --nproc-per-node 8 ...", "$MEGATRON_LM/pretrain_gpt.py"
# and its arguments); then the dry run's "torchrun-arg:" lines
# (--nnodes 4, --nproc-per-node 8, ..., /opt/megatron/pretrain_gpt.py,
# --num-layers 32, ...); then "trident: error: plan.json was made from
# llama.json (sha256 ...), but llama.json ... has sha256 ...: the file
# changed since the plan was made".
#
# Usage: bash python-free-examples/39-launch-script.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
FAKE=$PWD/test/tools/Inputs/fake-launch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp test/data/models/llama-3-8b.json "$tmp/llama.json"
cd "$tmp"

echo "\$ trident plan --model llama.json --cluster dgx-h100:4 --global-batch 256 --seq-len 8192 --fix tp=2,pp=2,zero=1 -o plan.json"
"$BIN/trident" plan --model llama.json --cluster dgx-h100:4 --global-batch 256 \
  --seq-len 8192 --fix tp=2,pp=2,zero=1 --top 1 -o plan.json > /dev/null
echo "\$ trident export --plan plan.json --to megatron --launcher slurm -o train.sbatch"
"$BIN/trident" export --plan plan.json --to megatron --launcher slurm -o train.sbatch
cat train.sbatch

echo
echo "\$ # a dry run: srun, scontrol and torchrun are stand-ins that print their arguments"
PATH="$FAKE:$PATH" MEGATRON_LM=/opt/megatron TOKENIZER_MODEL=meta-llama/Meta-Llama-3-8B \
  DATA_PATH=/data/text_document CHECKPOINT_DIR=/checkpoints \
  SLURM_JOB_NODELIST='node-[1-4]' SLURM_NNODES=4 SLURM_JOB_ID=1 bash train.sbatch

echo
echo "\$ # the config edited after planning"
echo '  ' >> llama.json
"$BIN/trident" export --plan plan.json --to megatron 2>&1 || true
