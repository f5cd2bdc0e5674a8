#!/usr/bin/env bash
#===- 38-interleaved-steps.sh - interleaved stages, many micro-batches ---===#
#
# Shows: an interleaved plan with 4x as many micro-batches as stages
# (tiny-gpt, tp 2 x pp 2, two chunks per stage, 8 micro-batches) emitted
# and trained. Each stage moves its activations and gradients in
# communication steps (docs/emit.md, "Pipeline transfers in communication
# steps"): the texec.schedule's `steps` say how many actions share one,
# 2 for each steady-state forward and backward (Megatron-LM's
# send_forward_backward_recv_forward_backward). The program runs 3 Adam
# steps on 4 MPI ranks and equals the single-rank run.
#
# Expected output shape: "$ trident emit ... --emit texec", one "stage S
# steps: ..." line per stage; then per program "$ trident emit ...",
# "trident: wrote ...", "$ mpirun ...", "precision fp32", three "step N
# loss L time T" lines; then the two comparisons' "OK: ..." lines.
#
# Usage: bash python-free-examples/38-interleaved-steps.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in
#        10-emit-and-run.sh)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run steps:
source python-free-examples/_emit-build.sh

plan=test/e2e/plans/tp2-pp2-vpp2-m8.json
echo "\$ trident emit --plan $plan --model tiny-gpt --emit texec"
"$BIN/trident" emit --plan "$plan" --model tiny-gpt --emit texec -o "$tmp/p.mlir"
# Each stage's steps attribute, one line per stage.
sed -n 's/.*texec.schedule .*{steps = array<i64: \(.*\)>}/\1/p' "$tmp/p.mlir" |
  awk '{ print "stage " NR - 1 " steps: " $0 }'
emit_build "$plan" tiny-gpt "$tmp/interleaved"
run_ranks 4 interleaved
emit_build test/e2e/plans/single.json tiny-gpt "$tmp/single"
run_ranks 1 single
compare_runs single interleaved
