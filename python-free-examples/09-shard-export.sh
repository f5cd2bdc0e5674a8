#!/usr/bin/env bash
#===- 09-shard-export.sh - a plan as upstream shard IR, partitioned upstream ===#
#
# Shows: the tiny-gpt model (4 GPT-2 layers, hidden 64) planned on one DGX
# H100 with tensor parallelism 2 and data parallelism 4 pinned, the plan
# attached with trident-apply-plan, exported by trident-export-shard to
# upstream-only IR (linalg + shard), and that IR partitioned by UPSTREAM
# mlir-opt (LLVM 22: sharding-propagation, shard-partition). No Trident code
# runs after the export. docs/shard-export.md explains the lowering.
#
# Expected output shape: the plan line "dp 4 tp 2 ..."; the grid
# "shard.grid @grid(shape = 4x2) {trident.axes = ["dp", "tp"]}"; the
# exported and the partitioned type of layer 0's q and fc1 weights (heads
# 4 -> 2, features 256 -> 128); then the collectives left after
# partitioning, one count per kind ("13 shard.all_reduce", "1
# shard.all_slice") and "shard.shard left: 0".
#
# Usage: bash python-free-examples/09-shard-export.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
MLIR_OPT=${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { echo "\$ $*"; "$@"; }

run "$BIN/trident" import --model tiny-gpt -o "$tmp/tiny.mlir"
# sp=false: upstream partitions no sequence-parallel sharding yet
# (docs/shard-export.md, "What upstream does not partition").
echo "\$ $BIN/trident plan --model tiny-gpt --cluster dgx-h100:1 --global-batch 8 --seq-len 32 --fix tp=2,pp=1,cp=1,dp=4,sp=false -o plan.json"
"$BIN/trident" plan --model tiny-gpt --cluster dgx-h100:1 --global-batch 8 \
  --seq-len 32 --fix tp=2,pp=1,cp=1,dp=4,sp=false -o "$tmp/plan.json" > /dev/null
grep -E '"(dp|tp|pp|cp|micro_batch_size)":' "$tmp/plan.json" | tr -d ' ,"' | tr '\n' ' '
echo
run "$BIN/trident-opt" "$tmp/tiny.mlir" --pass-pipeline="builtin.module(tgraph.model(trident-apply-plan{plan=$tmp/plan.json}),trident-export-shard)" -o "$tmp/tiny.shard.mlir"
grep 'shard.grid' "$tmp/tiny.shard.mlir" | sed 's/^ *//'
weights() {
  grep 'func.func' "$1" | grep -oE 'tensor<[0-9x]+xf32> \{trident.layer = 0 : i64, [^}]*"(attn.q_proj|mlp.fc1).weight"\}' | sed -E 's/\{trident.layer = 0 : i64, (trident.model_type = [^,]*, )?trident.param = //; s/\}//'
}
echo "exported layer-0 weights (q is heads x head_dim x in):"
weights "$tmp/tiny.shard.mlir"
run "$MLIR_OPT" "$tmp/tiny.shard.mlir" --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize))' -o "$tmp/tiny.part.mlir"
echo "partitioned layer-0 weights (per device):"
weights "$tmp/tiny.part.mlir"
echo "collectives after partitioning:"
grep -oE 'shard\.(all_reduce|all_gather|all_slice|all_to_all|reduce_scatter)' "$tmp/tiny.part.mlir" | sort | uniq -c
echo "shard.shard left: $(grep -c 'shard\.shard ' "$tmp/tiny.part.mlir" || true)"
