#!/usr/bin/env bash
#===- 37-checkpoint-resume.sh - a run checkpointed, resumed under another plan -===#
#
# Shows: tiny-gpt (global batch 24) trained 2 steps under dp 2 x tp 2 x
# pp 2 on 8 MPI ranks with a checkpoint after each step
# (--checkpoint-dir), then resumed from it under dp 3 x tp 2 on 6 ranks
# for steps 3 and 4 (--resume: each rank reads the slices its own plan
# needs), and compared with 4 uninterrupted steps on one rank: losses
# within 1e-5 relative, parameters within 1e-5 relative + 1e-5 absolute
# (docs/elastic.md, "Checkpoints").
#
# Expected output shape: per program "$ trident emit ...", "trident:
# wrote ..."; the 8-rank run's steps 1 and 2; the checkpoint directory's
# listing; the resumed run's "resumed from step 2 (plan ...)" and steps 3
# and 4; the single-rank run; two "OK: ..." lines of the compare tool.
#
# Usage: bash python-free-examples/37-checkpoint-resume.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in
#        10-emit-and-run.sh)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/build steps:
source python-free-examples/_emit-build.sh

mpi=(mpirun --oversubscribe --allow-run-as-root)
emit_build test/e2e/plans/elastic-dp2-tp2-pp2.json tiny-gpt "$tmp/eight"
emit_build test/e2e/plans/elastic-dp3-tp2.json tiny-gpt "$tmp/six"
emit_build test/e2e/plans/elastic-single.json tiny-gpt "$tmp/one"
echo "\$ mpirun -np 8 eight/build/train --steps 2 --checkpoint-dir ckpt"
"${mpi[@]}" -np 8 "$tmp/eight/build/train" --steps 2 --checkpoint-dir "$tmp/ckpt" |
  tee "$tmp/run.log"
echo "\$ ls ckpt ckpt/step-2"
(cd "$tmp" && ls ckpt ckpt/step-2)
echo "\$ mpirun -np 6 six/build/train --steps 4 --resume ckpt --dump six.dump"
"${mpi[@]}" -np 6 "$tmp/six/build/train" --steps 4 --resume "$tmp/ckpt" \
  --dump "$tmp/six.dump" | tee -a "$tmp/run.log"
echo "\$ mpirun -np 1 one/build/train --steps 4 --dump one.dump"
"${mpi[@]}" -np 1 "$tmp/one/build/train" --steps 4 --dump "$tmp/one.dump" |
  tee "$tmp/one.log"
echo "\$ trident-compare-params --losses one.log run.log --rtol 1e-5"
"$BIN/trident-compare-params" --losses "$tmp/one.log" "$tmp/run.log" --rtol 1e-5 | tail -n 1
echo "\$ trident-compare-params one.dump six.dump --rtol 1e-5 --atol 1e-5"
"$BIN/trident-compare-params" "$tmp/one.dump" "$tmp/six.dump" --rtol 1e-5 --atol 1e-5 | tail -n 1
