#!/usr/bin/env bash
#===- 10-emit-and-run.sh - a plan becomes a running program ---------------===#
#
# Shows: `trident emit` turning a plan for tiny-gpt (4 layers, hidden 64,
# 4 heads, vocabulary 256, sequence 32, fp32) with tensor parallelism 2 and
# two pipeline stages (1F1B, 4 micro-batches) into a C++ project; the
# project built through its own CMakeLists.txt (which adds the runtime from
# this source tree, or links the prebuilt one named by TRIDENT_RUNTIME_LIB;
# TRIDENT_PROGRAM_OPT, when set, is main.cpp's optimisation level there);
# 3 Adam steps on 4 MPI ranks; the same model on 1 rank; and
# trident-compare-params checking that the losses agree within 1e-5
# relative and every final parameter within 1e-5 relative + 1e-5 absolute
# (docs/emit.md says why the absolute floor). docs/emit.md explains each
# step.
#
# Expected output shape: "$ trident emit ...", "trident: wrote ...",
# "$ mpirun -np 4 ...", three "step N loss L time T" lines, the same for
# one rank, then the compare tool's "OK: 3 steps, ..." (losses) and
# "OK: 68 parameters, 218496 elements, 0 outside ..." lines.
#
# Usage: bash python-free-examples/10-emit-and-run.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as described)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh

emit_build test/e2e/plans/tp2-pp2.json tiny-gpt "$tmp/tp2-pp2"
run_ranks 4 tp2-pp2
emit_build test/e2e/plans/single.json tiny-gpt "$tmp/single"
run_ranks 1 single
compare_runs single tp2-pp2
