#!/usr/bin/env bash
#===- 41-moe-dispatch.sh - what the MoE token exchange and FP8 cost ------===#
#
# Shows: Qwen3-30B-A3B (128 experts, top-8) on two DGX H100 nodes with
# expert parallelism 16, the shape of Megatron-Bridge's Qwen3 benchmark,
# priced three ways by `trident evaluate`:
# - the all-to-all dispatcher (Megatron-Core's alltoall, the default): each
#   token's 8 routed copies, half of them over InfiniBand;
# - the node-aware flex dispatcher (DeepEP / HybridEP): a token crosses
#   InfiniBand once to the other node when that node holds one of its
#   experts, and NVLink fans it out (docs/cost-model.md, "Mixture of
#   experts");
# - the same with force-balanced routing (--moe-load-imbalance 1), as
#   benchmark runs route, instead of the 1.25 capacity factor;
# - the same with Megatron-Core's --overlap-moe-expert-parallel-comm
#   (--moe-overlap-ep-comm): each micro-batch's dispatch and combine hide
#   behind another micro-batch's compute, which runs slower beside them.
# Then FP8 against bf16 activations: Transformer Engine keeps the FP8
# GEMMs' inputs as one-byte copies, so the FP8 run's activations are
# smaller.
#
# Expected output shape: for each of the four, the "experts" line (the
# dispatcher and load imbalance priced), the "step time" line and the
# "stage 0" row (compute, exposed communication, ...); then the two
# "memory" lines, bf16 and fp8, with their activation bytes.
#
# Usage: bash python-free-examples/41-moe-dispatch.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${TRIDENT_BIN:-build/bin}" && pwd)
MODEL=$PWD/test/data/models/qwen3-30b-a3b.json
run() {
  "$BIN/trident" evaluate --model "$MODEL" --cluster dgx-h100:2 \
    --global-batch 1024 --seq-len 4096 --tp 1 --pp 1 --dp 16 --ep 16 \
    --micro-batch 1 --zero 1 "$@"
}
for how in "--moe-dispatcher alltoall" "--moe-dispatcher flex" \
           "--moe-dispatcher flex --moe-load-imbalance 1" \
           "--moe-dispatcher flex --moe-load-imbalance 1 --moe-overlap-ep-comm"; do
  echo "\$ trident evaluate ... --precision fp8 $how"
  # shellcheck disable=SC2086
  run --precision fp8 $how | grep -E "^(experts|step time|    0 )"
done
for p in bf16 fp8; do
  echo "\$ trident evaluate ... --precision $p --moe-dispatcher flex"
  run --precision $p --moe-dispatcher flex | grep "^memory"
done
