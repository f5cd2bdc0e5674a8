#!/usr/bin/env bash
#===- 19-experts-over-tp.sh - experts split over tensor parallelism -------===#
#
# Megatron's default for a mixture of experts under tensor parallelism is
# expert tensor parallelism (etp = tp): each expert's feature dimension is
# split over tp like a dense MLP's. The planner always plans it that way,
# so `trident emit` runs it. This example
#  1. plans Mixtral-8x7B on 4 DGX H100 nodes with tp and ep pinned to 2
#     and emits the texec IR: the expert weights are split twice, experts
#     over ep and features over tp, and the gated w_in in two blocks (gate,
#     up), so each rank keeps its piece of both;
#  2. emits tiny-mixtral (test/e2e/models/tiny-mixtral.json: 4 experts of
#     ffn 64, gated SiLU, top 2) under dp 2 x tp 2 with sequence
#     parallelism, experts over ep 2 and split over tp. Every tp rank
#     routes the same tokens (sequence shards gathered, then the ep
#     group's micro-batches), and the experts' partial sums are
#     reduce-scattered over ep, then over tp;
#  3. runs 3 Adam steps on 4 MPI ranks and on 1, compared by
#     trident-compare-params (losses within 1e-5 relative, parameters
#     within 1e-5 relative + 1e-5 absolute).
#
# Expected output shape: Mixtral's plan line (tp 2) and its split expert
# weights; the emit line; tiny-mixtral's split expert weights and the
# collectives around its first moe kernel; "step N loss L time T" lines
# for 4 ranks and for 1; the compare tool's two "OK: ..." lines.
#
# Usage: bash python-free-examples/19-experts-over-tp.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
MODEL=test/e2e/models/tiny-mixtral.json

echo "\$ trident plan --model mixtral-8x7b --cluster dgx-h100:4 --global-batch 256 --seq-len 4096 --fix tp=2,ep=2 -o mixtral.json"
"$BIN/trident" plan --model mixtral-8x7b --cluster dgx-h100:4 \
  --global-batch 256 --seq-len 4096 --fix tp=2,ep=2 -o "$tmp/mixtral.json" |
  sed -n '6,7p'
echo "\$ trident emit --plan mixtral.json --model mixtral-8x7b --emit texec --train-in-f32"
"$BIN/trident" emit --plan "$tmp/mixtral.json" --model mixtral-8x7b \
  --emit texec --train-in-f32 -o "$tmp/mixtral.mlir" 2> /dev/null
grep -m2 'texec.param "layers.0.moe.experts' "$tmp/mixtral.mlir" |
  sed 's/^ *//'

echo
emit_build test/e2e/plans/tiny-mixtral-dp2-ep2-tp2-sp-etp.json "$MODEL" \
  "$tmp/etp"
echo "# tiny-mixtral's expert weights and its first mixture of experts (texec IR):"
grep -m2 'texec.param "layers.0.moe.experts' "$tmp/etp/program.texec.mlir" |
  sed 's/^ *//'
grep -m1 -B2 -A2 'texec.kernel "moe"' "$tmp/etp/program.texec.mlir" |
  sed 's/^ *//; s/ config {.*//'
run_ranks 4 etp
emit_build test/e2e/plans/tiny-mixtral-single.json "$MODEL" "$tmp/single"
run_ranks 1 single
compare_runs single etp
