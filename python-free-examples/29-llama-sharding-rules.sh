#!/usr/bin/env bash
#===- 29-llama-sharding-rules.sh - Llama-3 8B split by upstream partitioning ===#
#
# Shows: Llama-3 8B (32 layers, GQA with 32 query and 8 kv heads, RoPE,
# SwiGLU) planned on one DGX H100 with tensor parallelism 2 and data
# parallelism 4 pinned; trident-shard-tgraph outlines the planned model as
# one function of tgraph ops, annotating only the plan's decisions (the
# batch over dp, each tensor-parallel weight and the token table by the op
# that reads it); then UPSTREAM
# passes (sharding-propagation, shard-partition) split every op by the
# tgraph ops' ShardingInterface rules. docs/shard-export.md explains both
# exports; docs/tgraph.md lists the rules.
#
# Expected output shape: the plan line "dp:4 tp:2 pp:1 cp:1
# micro_batch_size:N"; layer 0's q, k, o and down weights per device
# (q 4096 -> 2048 rows, k 1024 -> 512 rows, o and down split on their
# columns); the attention of layer 0 on 16 heads and 4 kv heads; the
# collectives, one count per kind: 64 tp all-reduces (two per layer: after
# attention and after the MLP), one all-gather of the row-split token table
# (the lookup's rule gathers it: no masked lookup), one of the
# vocabulary-split logits, one dp average of the loss; "shard.shard left: 0".
#
# Usage: bash python-free-examples/29-llama-sharding-rules.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { echo "\$ $*"; "$@"; }

run "$BIN/trident" import --model llama-3-8b --seq-len 4096 -o "$tmp/llama.mlir"
echo "\$ $BIN/trident plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 32 --seq-len 4096 --fix tp=2,dp=4,pp=1,cp=1,sp=false -o plan.json"
"$BIN/trident" plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 32 \
  --seq-len 4096 --fix tp=2,dp=4,pp=1,cp=1,sp=false -o "$tmp/plan.json" > /dev/null
grep -E '"(dp|tp|pp|cp|micro_batch_size)":' "$tmp/plan.json" | tr -d ' ,"' | tr '\n' ' '
echo
run "$BIN/trident-opt" "$tmp/llama.mlir" --pass-pipeline="builtin.module(tgraph.model(trident-apply-plan{plan=$tmp/plan.json}),trident-shard-tgraph,func.func(sharding-propagation,cse,shard-partition,canonicalize,cse))" -o "$tmp/llama.part.mlir"
echo "layer-0 weights per device:"
grep 'func.func' "$tmp/llama.part.mlir" | grep -oE 'tensor<[0-9x]+xbf16> \{tgraph.name = "layers\.0\.(attn\.(q|k|o)_proj|mlp\.down_proj)\.weight"\}' | sed -E 's/\{tgraph.name = //; s/\}//'
echo "layer-0 attention per device:"
grep -m1 -oE 'tgraph.attention [^{]*\{[^}]*\}' "$tmp/llama.part.mlir" | grep -oE 'num_(kv_)?heads = [0-9]+' | tr '\n' ' '
echo
echo "collectives after partitioning:"
grep -oE 'shard\.(all_reduce|all_gather|all_slice|all_to_all|reduce_scatter) [^:]*' "$tmp/llama.part.mlir" | sed -E 's/ %[a-z_0-9]+ / /' | sort | uniq -c
echo "shard.shard left: $(grep -c 'shard\.shard ' "$tmp/llama.part.mlir" || true)"
