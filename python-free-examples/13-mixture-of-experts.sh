#!/usr/bin/env bash
#===- 13-mixture-of-experts.sh - a routed-experts model, planned and run --===#
#
# Shows a mixture-of-experts model from plan to running program:
#  1. `trident plan` for Mixtral-8x7B (8 experts, top 2) on 4 DGX H100
#     nodes, then the same with the experts split 8 ways (--fix ep=8, as
#     Megatron-Bridge's Mixtral recipes split them): the planner splits
#     the experts 2 ways (ep 2, the ep column) over 2 pipeline stages
#     with ZeRO-2 (5.441 s), 1 ms ahead of 4 ways inside a node without
#     pipelining (ep 4, 5.442 s): ep 2's all-to-alls (4.2 % of the step
#     exposed, against 7.1 % at ep 4) pay for its pipeline bubble
#     (3.0 %); at ep 8 (5.511 s) the all-to-alls cost more than the
#     fewer local experts save (Transformer Engine runs one GEMM per
#     local expert, each with a fixed cost: docs/cost-model.md, "One GEMM
#     per local expert");
#  2. tiny-mixtral (test/e2e/models/tiny-mixtral.json: 4 blocks, hidden 64,
#     4 experts of ffn 64 with gated SiLU, top 2, GQA, RoPE) emitted under
#     dp 4 x ep 2: each rank holds 2 of the 4 experts, the tokens of an ep
#     group are all-gathered, each rank applies its experts to the tokens
#     routed to them, and a reduce-scatter sums the parts;
#  3. 3 Adam steps on 4 MPI ranks and on 1, compared by
#     trident-compare-params (losses within 1e-5 relative, parameters
#     within 1e-5 relative + 1e-5 absolute).
#
# Expected output shape: the plan table (top 3) and the ep 8 plan's row; the
# texec lines
# of the first mixture of experts (all-gather, moe, reduce-scatter over
# "ep"); "step N loss L time T" lines for 4 ranks and for 1; the compare
# tool's two "OK: ..." lines.
#
# Usage: bash python-free-examples/13-mixture-of-experts.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
MODEL=test/e2e/models/tiny-mixtral.json

# Megatron-Core runs without --tp-comm-overlap unless asked: the plans
# here leave it off (python-free-examples/42-tp-comm-overlap.sh shows it).
echo "\$ trident plan --model mixtral-8x7b --cluster dgx-h100:4 --global-batch 256 --seq-len 4096 --top 3 --fix tp_comm_overlap=false"
"$BIN/trident" plan --model mixtral-8x7b --cluster dgx-h100:4 \
  --global-batch 256 --seq-len 4096 --top 3 --fix tp_comm_overlap=false |
  sed -n '1,9p'
echo "\$ trident plan --model mixtral-8x7b --cluster dgx-h100:4 --global-batch 256 --seq-len 4096 --top 1 --fix tp_comm_overlap=false,ep=8"
"$BIN/trident" plan --model mixtral-8x7b --cluster dgx-h100:4 \
  --global-batch 256 --seq-len 4096 --top 1 --fix tp_comm_overlap=false,ep=8 |
  sed -n '6,7p'

echo
emit_build test/e2e/plans/tiny-mixtral-dp4-ep2.json "$MODEL" "$tmp/ep2"
echo "# the first mixture of experts of the program (texec IR):"
grep -m1 -A2 'texec.all_gather .* group "ep"' "$tmp/ep2/program.texec.mlir" |
  sed 's/^ *//'
run_ranks 4 ep2
emit_build test/e2e/plans/tiny-mixtral-single.json "$MODEL" "$tmp/single"
run_ranks 1 single
compare_runs single ep2
