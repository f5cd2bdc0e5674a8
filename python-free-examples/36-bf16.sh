#!/usr/bin/env bash
#===- 36-bf16.sh - an emitted program in bf16 mixed precision ------------===#
#
# Shows: `trident emit --precision bf16` turning tiny-llama's tp 2 plan
# (RMSNorm, SwiGLU, RoPE, grouped-query attention; sequence parallel) into
# a bf16 mixed-precision program: bf16 weight copies and activations, fp32
# master weights, gradients and Adam state (docs/emit.md, "bf16 mixed
# precision"). It prints its precision before the first step; 3 Adam
# steps on 2 MPI ranks are then compared, losses only, with the
# single-rank fp32 run (within 2 %) and the single-rank bf16 run (within
# 1.4e-3, the tolerance docs/emit.md derives).
#
# Expected output shape: per program "$ trident emit ...", "trident:
# wrote ...", "$ mpirun ...", "precision ...", three "step N loss L time
# T" lines; then two "OK: 3 steps, worst relative difference ..." lines.
#
# Usage: bash python-free-examples/36-bf16.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in
#        10-emit-and-run.sh)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run steps:
source python-free-examples/_emit-build.sh

model=test/e2e/models/tiny-llama.json
# emit notes that the fp32 plan's figures assumed fp32 (expected here):
# that note is dropped, any other message kept.
quiet() { grep -v "assume fp32 training" >&2 || true; }
emit_build test/e2e/plans/tiny-llama-tp2-sp.json "$model" "$tmp/tp2-bf16" \
  --precision bf16 2> >(quiet)
run_ranks 2 tp2-bf16
emit_build test/e2e/plans/tiny-llama-single.json "$model" "$tmp/single-bf16" \
  --precision bf16 2> >(quiet)
run_ranks 1 single-bf16
emit_build test/e2e/plans/tiny-llama-single.json "$model" "$tmp/single"
run_ranks 1 single
echo "\$ trident-compare-params --losses single.log tp2-bf16.log --rtol 2e-2"
"$BIN/trident-compare-params" --losses "$tmp/single.log" "$tmp/tp2-bf16.log" --rtol 2e-2
echo "\$ trident-compare-params --losses single-bf16.log tp2-bf16.log --rtol 1.4e-3"
"$BIN/trident-compare-params" --losses "$tmp/single-bf16.log" "$tmp/tp2-bf16.log" --rtol 1.4e-3
