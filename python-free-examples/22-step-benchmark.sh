#!/usr/bin/env bash
#===- 22-step-benchmark.sh - a program's step time beside its prediction -===#
#
# The one-GPU benchmark (scripts/gpu-bench.sh) plans a model for one GPU
# under the `trident` runtime, the cost model's description of the
# programs `trident emit` writes (fp32, unfused attention, the gradient
# all-reduce after the backward), emits and compiles that plan, runs it
# on one rank and prints the measured step time and peak tensor memory
# beside the plan's predictions. This example
#  1. plans the benchmark's ~1 B-parameter GPT (bench/models/gpt-1b.json:
#     18 layers, hidden 2048, 16 heads, vocabulary 50304, 8 sequences of
#     2048 tokens per step) on one H200 in fp32, as the script does on a
#     GPU machine (scripts/gpu-check.sh runs it there);
#  2. runs the script itself with --backend cpu on tiny-gpt: the same
#     plan, emit, compile, run and comparison steps on the CPU runtime.
#     The prediction stays the GPU's, so that ratio checks the script's
#     mechanics, not the cost model; the memory ratio does compare like
#     with like (the program's tensors against the plan's);
#  3. runs it again with --backend cuda-emu: the CUDA program a GPU runs,
#     TF32 GEMMs included, against the emulated CUDA runtime
#     (docs/runtime.md, "CUDA source on the CPU");
#  4. runs it with --backend cuda-emu --precision bf16: the bf16
#     mixed-precision CUDA program, its GEMMs on bf16 copies of their
#     operands (rt::setBf16Gemms: cublasGemmEx, emulated), against the bf16
#     plan of the trident runtime, which prices bf16 values held in fp32
#     tensors and GEMMs on bf16 copies (docs/emit.md, "bf16 mixed
#     precision"); the memory ratio checks that pricing;
#  5. runs the bf16 program planned with selective recomputation, whose
#     attention keeps its rows' log-sum-exp instead of the probabilities,
#     with the program's --fused-attention (the fused attention forward
#     and backward, rt::setFusedAttention: bf16 tensor-core tiles,
#     emulated): the
#     memory ratio checks selective's pricing.
#
# Expected output shape: the plan's table row and predictions; four times the
# script's "run" lines for 3 steps, then "predicted", "measured" and
# "ratio" lines.
#
# Usage: bash python-free-examples/22-step-benchmark.sh
#        (needs mpirun; TRIDENT_BIN as in example 01: the build directory
#        is the one above it, whose lib/ holds the runtime archive)
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
build=$(cd "$BIN/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# 1. The benchmark model planned for one H200 in fp32"
printf '{"name": "one-gpu", "groups": [{"gpu": "h200", "nodes": 1, "gpus_per_node": 1}]}\n' \
  > "$tmp/one-h200.json"
echo "\$ trident plan --model bench/models/gpt-1b.json --cluster one-h200.json --global-batch 8 --seq-len 2048 --precision fp32 --runtime trident --fix tp=1,pp=1,dp=1,cp=1,mb=1,recompute=none,zero=0 -o plan.json"
"$BIN/trident" plan --model bench/models/gpt-1b.json --cluster "$tmp/one-h200.json" \
  --global-batch 8 --seq-len 2048 --precision fp32 --runtime trident \
  --fix tp=1,pp=1,dp=1,cp=1,mb=1,recompute=none,zero=0 -o "$tmp/plan.json" |
  grep -E '^(model|runtime|  1 )'
sed -n 's/^ *"\(iteration_time_s\|tflops_per_gpu\|peak_memory_bytes\)": \([^,]*\),\{0,1\}$/predicted \1 \2/p' "$tmp/plan.json"

echo
echo "# 2. scripts/gpu-bench.sh on the CPU runtime (tiny-gpt, 3 steps)"
echo "\$ bash scripts/gpu-bench.sh --backend cpu --model tiny-gpt --seq-len 32 --global-batch 4 --steps 3"
bash scripts/gpu-bench.sh --backend cpu --build-dir "$build" --model tiny-gpt \
  --seq-len 32 --global-batch 4 --steps 3

echo
echo "# 3. The same CUDA program the GPU runs (with --tf32), on the emulated CUDA runtime"
echo "\$ bash scripts/gpu-bench.sh --backend cuda-emu --model tiny-gpt --seq-len 32 --global-batch 4 --steps 3"
bash scripts/gpu-bench.sh --backend cuda-emu --build-dir "$build" --model tiny-gpt \
  --seq-len 32 --global-batch 4 --steps 3

echo
echo "# 4. The CUDA program in bf16 mixed precision (priced as it runs: bf16 values in fp32 tensors, GEMMs on bf16 copies)"
echo "\$ bash scripts/gpu-bench.sh --backend cuda-emu --model tiny-gpt --seq-len 32 --global-batch 4 --steps 3 --precision bf16"
bash scripts/gpu-bench.sh --backend cuda-emu --build-dir "$build" --model tiny-gpt \
  --seq-len 32 --global-batch 4 --steps 3 --precision bf16

echo
echo "# 5. bf16 under selective recomputation (attention keeps its rows' log-sum-exp), with the fused attention forward"
echo "\$ bash scripts/gpu-bench.sh --backend cuda-emu --model tiny-gpt --seq-len 32 --global-batch 4 --steps 3 --precision bf16 --recompute selective --fused-attention"
bash scripts/gpu-bench.sh --backend cuda-emu --build-dir "$build" --model tiny-gpt \
  --seq-len 32 --global-batch 4 --steps 3 --precision bf16 --recompute selective \
  --fused-attention
