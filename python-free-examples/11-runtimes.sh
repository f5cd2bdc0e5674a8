#!/usr/bin/env bash
#===- 11-runtimes.sh - one plan under four training runtimes -------------===#
#
# Shows: `trident evaluate --runtime R` (docs/cost-model.md, "Runtimes").
# The same plan, Llama-3-8B at sequence 8192 on one DGX H100 node with
# FSDP (dp 8, ZeRO-3, micro-batch 1), is predicted under the four
# runtimes: megatron-core (Transformer Engine's fused attention), fsdp
# (FlashAttention-2 and autocast), torchtitan (FlashAttention-2, bf16
# elementwise) and megatron-lm (unfused attention, gradient all-reduce
# after the backward). Then Narayanan et al. 2021's ZeRO-3 run (GPT-3
# 175B on 1536 A100s, measured 31 tokens/s/GPU) under megatron-lm and
# under deepspeed, DeepSpeed ZeRO-3 as of 2021 (a gather per parameter
# tensor, not overlapped). Then the validation summary with every
# published run forced to megatron-core, and with each run under its own
# runtime.
#
# Expected output shape: three lines "RUNTIME: N tokens/s/GPU, MFU M%",
# megatron-core the fastest on this H100, and "megatron-lm: does not fit"
# (unfused attention keeps the 8192 x 8192 scores); two lines "RUNTIME:
# N tokens/s/GPU, exposed communication X s", deepspeed the slower with
# more exposed communication; then two "all ..."
# summary lines
# of `trident validate` (forced first), the second with the smaller median
# and 90th percentile.
#
# Usage: bash python-free-examples/11-runtimes.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}

ARGS=(--model llama-3-8b --cluster dgx-h100:1 --global-batch 16
      --seq-len 8192 --dp 8 --zero 3 --micro-batch 1)
echo "\$ trident evaluate ${ARGS[*]} --json --runtime R"
for r in megatron-core fsdp torchtitan megatron-lm; do
  # Exit status 3: the plan does not fit under this runtime.
  status=0
  json=$("$BIN/trident" evaluate "${ARGS[@]}" --json --runtime "$r" \
         2>/dev/null) || status=$?
  tok=$(echo "$json" | sed -n 's/^  "tokens_per_s_per_gpu": \([0-9]*\).*/\1/p')
  mfu=$(echo "$json" | sed -n 's/^  "mfu": 0\.\([0-9][0-9]\)\([0-9]\).*/\1.\2/p')
  if [ "$status" = 3 ]; then
    peak=$(echo "$json" | sed -n 's/^    "peak_bytes": \([0-9]*\)[0-9]\{9\}.*/\1/p')
    echo "$r: does not fit (peak ${peak} GB per GPU: the s^2 attention scores are kept)"
  elif [ "$status" = 0 ]; then
    echo "$r: $tok tokens/s/GPU, MFU $mfu%"
  else
    exit "$status"
  fi
done

echo
Z3=(--model gpt3-175b --cluster dgx-a100-80gb:192 --global-batch 1536
    --seq-len 2048 --dp 1536 --micro-batch 1 --zero 3 --recompute full
    --precision fp16)
echo "\$ trident evaluate ${Z3[*]} --json --runtime R"
for r in megatron-lm deepspeed; do
  json=$("$BIN/trident" evaluate "${Z3[@]}" --json --runtime "$r")
  tok=$(echo "$json" | sed -n 's/^  "tokens_per_s_per_gpu": \([0-9]*\).*/\1/p')
  exp=$(echo "$json" | sed -n 's/^        "exposed_comm_s": \([0-9]*\.[0-9]\).*/\1/p' | head -1)
  echo "$r: $tok tokens/s/GPU, exposed communication $exp s"
done

echo
echo "\$ trident validate --runtime megatron-core   # every run forced"
"$BIN/trident" validate --runtime megatron-core | grep '^all '
echo "\$ trident validate                           # each run's own runtime"
"$BIN/trident" validate | grep '^all '
