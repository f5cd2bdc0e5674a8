#!/usr/bin/env bash
#===- 40-megatron-bridge.sh - a plan as Megatron-Bridge recipe overrides --===#
#
# Shows: Mixtral-8x7B planned with expert parallelism 8 on 4 DGX H100
# nodes, exported for Megatron-Bridge (NeMo 2's successor): the arguments
# of its recipe runner, scripts/training/run_recipe.py, on the vanilla GPT
# recipe (Megatron-Core's defaults), with the plan and the model as
# KEY=VALUE overrides translated from the Megatron-LM export
# (docs/exporters.md, "Megatron-Bridge"). The distributed optimizer is set
# in both the ddp and optimizer configs, since the recipe's optimizer would
# otherwise turn it on. Then a one-node plan (Llama-3-8B, tp 2 x pp 2 with
# an uneven interleaved layout) as a torchrun script, dry-run against a
# stand-in for torchrun (test/tools/Inputs/fake-launch) that prints each
# argument it gets: every override arrives as the one word Hydra reads.
# Last, the refusal of a latent-attention model (DeepSeek-V3), which the
# vanilla recipe's GPTModelProvider cannot build.
#
# Expected output shape: "# Megatron-Bridge run_recipe.py arguments for
# mixtral_8x7b on dgx-h100:4", the prediction comments, "--recipe
# vanilla_gpt_pretrain_1gpu_h100_bf16_config", "--mode pretrain",
# "--dataset megatron-indexed", "model.expert_model_parallel_size=8", ...,
# "model.num_moe_experts=8", "model.moe_router_topk=2", ...,
# "mixed_precision=bf16_mixed"; then the dry run's "torchrun-arg:" lines
# (--standalone, --nproc-per-node 8, /opt/bridge/scripts/training/
# run_recipe.py, --recipe ..., model.num_layers=32, ...,
# dataset.data_path='/data/text_document'); then "trident: error: ...:
# cannot export to Megatron-Bridge: the model's latent attention: ...".
#
# Usage: bash python-free-examples/40-megatron-bridge.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
FAKE=$PWD/test/tools/Inputs/fake-launch
DATA=$PWD/test/data/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

echo "\$ trident plan --model mixtral-8x7b --cluster dgx-h100:4 --global-batch 64 --seq-len 4096 --fix ep=8,tp=1,pp=1,cp=1 -o moe.json"
"$BIN/trident" plan --model mixtral-8x7b --cluster dgx-h100:4 --global-batch 64 \
  --seq-len 4096 --fix ep=8,tp=1,pp=1,cp=1 --top 1 -o moe.json > /dev/null
echo "\$ trident export --plan moe.json --to megatron-bridge"
"$BIN/trident" export --plan moe.json --to megatron-bridge

echo
echo "\$ trident plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 64 --seq-len 4096 --fix tp=2,pp=2,zero=1 -o dense.json"
"$BIN/trident" plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 64 \
  --seq-len 4096 --fix tp=2,pp=2,zero=1 --top 1 -o dense.json > /dev/null
echo "\$ trident export --plan dense.json --to megatron-bridge --launcher torchrun -o train.sh"
"$BIN/trident" export --plan dense.json --to megatron-bridge --launcher torchrun -o train.sh
echo "\$ # a dry run: torchrun is a stand-in that prints its arguments"
PATH="$FAKE:$PATH" MEGATRON_BRIDGE=/opt/bridge TOKENIZER_MODEL=meta-llama/Meta-Llama-3-8B \
  DATA_PATH=/data/text_document CHECKPOINT_DIR=/checkpoints bash train.sh

echo
echo "\$ # a model with latent attention"
"$BIN/trident" plan --model "$DATA/deepseek-v3.json" --cluster dgx-h100:128 \
  --global-batch 1024 --seq-len 4096 --top 1 --export megatron-bridge 2>&1 || true
