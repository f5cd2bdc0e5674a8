#!/usr/bin/env bash
#===- 34-serve.sh - Serving plans for a dense and two MoE models --------===#
#
# Plans the serving of three models (docs/serving.md):
#  1. Llama-3-70B on one DGX H100, prompts of 2048 tokens and answers of
#     256, a TPOT target of 50 ms: the layouts that meet it ranked by
#     output tokens/s per GPU, with the vLLM command of the best.
#  2. Mixtral-8x7B (MoE) on two DGX H100 nodes at 20 requests/s within
#     500 ms TTFT and 50 ms TPOT, fp8 weights and cache, as disaggregated
#     prefill and decode pools, with the SGLang commands of both pools.
#  3. DeepSeek-V3 on one H200 node, fp8: data-parallel attention (each GPU
#     keeps the latent cache of its own sequences, the experts over all
#     eight) well ahead of the tensor-parallel layouts, with SGLang's
#     --enable-dp-attention command.
#
# Expected output shape: each run prints its "serve" and "kv cache" lines,
# a table of plans (the first one "met") and the launch command(s).
#
# Usage: bash python-free-examples/34-serve.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

dense=(--model llama-3-70b --cluster dgx-h100:1 --input-len 2048
       --output-len 256 --tpot-ms 50 --top 3
       --served-model meta-llama/Meta-Llama-3-70B-Instruct)
echo "\$ trident serve ${dense[*]}"
"$BIN/trident" serve "${dense[@]}"
echo
moe=(--model mixtral-8x7b --cluster dgx-h100:2 --input-len 1024
     --output-len 256 --rate 20 --ttft-ms 500 --tpot-ms 50
     --precision fp8 --kv-precision fp8 --disaggregate --engine sglang
     --top 3 --served-model mistralai/Mixtral-8x7B-Instruct-v0.1)
echo "\$ trident serve ${moe[*]}"
"$BIN/trident" serve "${moe[@]}"
echo
mla=(--model test/data/models/deepseek-v3.json --cluster hgx-h200:1
     --input-len 1024 --output-len 2048 --precision fp8 --kv-precision fp8
     --engine sglang --top 3 --served-model deepseek-ai/DeepSeek-V3)
echo "\$ trident serve ${mla[*]}"
"$BIN/trident" serve "${mla[@]}" 2> /dev/null
