#!/usr/bin/env bash
#===- 12-context-parallel.sh - long sequences split over GPUs -------------===#
#
# Shows context parallelism from plan to running program:
#  1. `trident plan` for Llama-3-8B at a 65,536-token sequence on one DGX
#     H100 (8 GPUs) picks a context-parallel layout (cp 8: each GPU holds
#     8,192 positions of every sequence);
#  2. `trident evaluate` of the same GPUs without it (dp 4 x tp 2) does not
#     fit: the activations of whole 64K sequences need 198 GB per GPU
#     (exit code 3, printed here);
#  3. the chosen plan of the real model emits: `trident emit --train-in-f32
#     --emit texec` writes Llama-3-8B's per-rank program (its bf16
#     parameters trained in f32);
#  4. the layout runs: `trident emit` of tiny-llama (4 layers, hidden 64,
#     GQA 4/2 heads, RoPE, RMSNorm, SwiGLU; test/e2e/models/tiny-llama.json)
#     under cp 2 x tp 2 with sequence parallelism, built through the
#     emitted CMakeLists.txt, 3 Adam steps on 4 MPI ranks, compared with the
#     single-rank run of the same model by trident-compare-params (losses
#     within 1e-5 relative, parameters within 1e-5 relative + 1e-5
#     absolute; docs/emit.md).
#
# Expected output shape: the plan table with cp 8 in row 1; "does not fit"
# and "exit 3"; the best plan emitted as Llama-3-8B's texec program (in
# f32: the note says so), its program line and 32 attention kernels; the
# texec lines of one attention (two all_gathers over
# "cp" and the kernel with cp_axis); three "step N loss L time T" lines for
# 4 ranks and for 1; the compare tool's two "OK: ..." lines.
#
# Usage: bash python-free-examples/12-context-parallel.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
MODEL=test/e2e/models/tiny-llama.json

echo "\$ trident plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 8 --seq-len 65536 --top 3"
"$BIN/trident" plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 8 \
  --seq-len 65536 --top 3

echo
echo "\$ trident evaluate ... --dp 4 --tp 2 --cp 1 (no context parallelism)"
rc=0
"$BIN/trident" evaluate --model llama-3-8b --cluster dgx-h100:1 \
  --global-batch 8 --seq-len 65536 --dp 4 --tp 2 --pp 1 --cp 1 \
  --micro-batch 1 --recompute selective --zero 1 > "$tmp/nocp.txt" 2>&1 || rc=$?
grep '^memory' "$tmp/nocp.txt"
echo "exit $rc"

echo
echo "\$ trident plan ... -o plan.json; trident emit --plan plan.json --model llama-3-8b --train-in-f32 --emit texec"
"$BIN/trident" plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 8 \
  --seq-len 65536 -o "$tmp/plan.json" > /dev/null
"$BIN/trident" emit --plan "$tmp/plan.json" --model llama-3-8b --train-in-f32 \
  --emit texec -o "$tmp/llama-3-8b.mlir" 2>&1
grep -m1 'texec.program' "$tmp/llama-3-8b.mlir" | sed 's/^ *//'
echo "attention kernels in the forward: $(grep -c 'texec.kernel "attention"' "$tmp/llama-3-8b.mlir")"

echo
PLAN=test/e2e/plans/tiny-llama-cp2-tp2-sp.json
emit_build "$PLAN" "$MODEL" "$tmp/cp2-tp2"
echo "# the first attention of the program (texec IR):"
grep -m1 -B2 'texec.kernel "attention"' "$tmp/cp2-tp2/program.texec.mlir" |
  sed 's/^ *//'
run_ranks 4 cp2-tp2
emit_build test/e2e/plans/tiny-llama-single.json "$MODEL" "$tmp/single"
run_ranks 1 single
compare_runs single cp2-tp2
