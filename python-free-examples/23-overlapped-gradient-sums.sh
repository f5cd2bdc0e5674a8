#!/usr/bin/env bash
#===- 23-overlapped-gradient-sums.sh - gradient sums during the backward --===#
#
# Shows where an emitted ZeRO-0 program sums its gradients over data
# parallelism: each parameter's all-reduce starts right after its last
# contribution of the step (in the backward of the schedule's last
# micro-batch that reaches it), so on CUDA it runs on the communication
# stream while the rest of the backward computes; the step waits for all
# of them before the optimizer. tiny-gpt on dp 2 (test/e2e/plans/dp2.json)
# is emitted, the start points are counted and one is shown, the program
# is trained 3 Adam steps on 2 MPI ranks and compared with the single-rank
# run. Last, the cost model's `trident` runtime prices the same overlap:
# a 1 B-parameter GPT on 16 H100s with ZeRO 0 (all-reduce hidden behind
# the backward) and ZeRO 1 (reduce-scatter hidden too, started in the
# backward by startSliceSum; the parameters' all-gather after the
# optimizer step hidden behind the next step's forward: the gathers start
# two parameters ahead of it and each parameter is waited for at its
# first use; the ZeRO-1 program's lines for that are shown too; and, on
# tp 2, a linear's input gradient summed over tp while its weight
# gradient's GEMM runs: the tp2-pp2 program's lines). Hidden,
# they still cost the step a little: the compute beside them runs 18.9 %
# of their time slower (docs/cost-model.md, "Compute beside hidden
# communication"), the "exposed DP" of the step lines.
#
# Expected output shape: the emit lines, "sums started in the backward:
# 68 of 68 parameters", one start point, the step's wait, the step lines,
# the compare tool's "OK" lines, the ZeRO-1 program's gather lines, the
# tp2-pp2 program's four lines and two "step time" lines.
#
# Usage: bash python-free-examples/23-overlapped-gradient-sums.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh

emit_build test/e2e/plans/single.json tiny-gpt "$tmp/single"
emit_build test/e2e/plans/dp2.json tiny-gpt "$tmp/dp2"
src="$tmp/dp2/main.cpp"
started=$(grep -c '^ *startGradSums(' "$src")
params=$(grep -c '^ *P.push_back(Param{' "$src")
echo "sums started in the backward: $started of $params parameters"
echo "the last one in the backward (an embedding table's, read first in the forward):"
grep -B1 '^ *startGradSums(' "$src" | tail -2 | sed 's/^ *//'
echo "the step waits for them before the optimizer:"
grep -A1 'waitGradSums(); // started in the backward' "$src" | sed 's/^ *//'
run_ranks 1 single
run_ranks 2 dp2
compare_runs single dp2

"$BIN/trident" emit --plan test/e2e/plans/zero1.json --model tiny-gpt \
  --backend cpu --emit cpp -o "$tmp/zero1.cpp"
echo "ZeRO-1: the optimizer step updates the rank's chunk of each parameter:"
grep -m1 'rt::zero2AdamUpdateChunk' "$tmp/zero1.cpp" | sed 's/^ *//'
echo "the all-gathers then start two ahead of the forward, which waits for"
echo "each parameter where it first reads it:"
grep -m1 -A1 '^ *awaitParam(0);' "$tmp/zero1.cpp" | sed 's/^ *//'

"$BIN/trident" emit --plan test/e2e/plans/tp2-pp2.json --model tiny-gpt \
  --backend cpu --emit cpp -o "$tmp/tp2.cpp"
echo "tp 2: fc1's input gradient is summed over tp while its weight"
echo "gradient is formed (e2e-cpu trains this plan to the single-rank run):"
grep -m1 -B1 -A1 '^ *rt::Pending .* = rt::allReduceSumAsync' "$tmp/tp2.cpp" |
  sed 's/^ *//'
grep -m1 '_sum.wait();' "$tmp/tp2.cpp" | sed 's/^ *//'

for z in 0 1; do
  echo "\$ trident evaluate --model bench/models/gpt-1b.json --cluster dgx-h100:2 --global-batch 64 --seq-len 2048 --tp 1 --pp 1 --dp 16 --micro-batch 1 --precision fp32 --runtime trident --zero $z"
  "$BIN/trident" evaluate --model bench/models/gpt-1b.json \
    --cluster dgx-h100:2 --global-batch 64 --seq-len 2048 --tp 1 --pp 1 \
    --dp 16 --micro-batch 1 --precision fp32 --runtime trident --zero "$z" |
    grep '^step time'
done
