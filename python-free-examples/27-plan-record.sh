#!/usr/bin/env bash
#===- 27-plan-record.sh - one plan record: axes, runtimes, a plan's model ---===#
#
# Shows: the plan record of include/trident/Plan/Parallel.h at work
# (docs/architecture.md).
#  1. `trident evaluate --json` writes the axes exactly as a plan file does
#     (one loop over the axis table): "parallel" with etp, then
#     micro_batch_size, num_micro_batches, recompute, zero_stage, schedule.
#  2. The runtime bounds the search: Llama-3-8B on 4 DGX H100 under
#     `--runtime fsdp` ranks only data-parallel plans (PyTorch FSDP has no
#     tensor, pipeline or context parallelism; before the table it ranked
#     dp 16 x cp 2 second); `evaluate` of cp 2 under fsdp prices it but
#     says fsdp cannot run it.
#  3. A plan is held to what it is applied to (plan::verify): the plan
#     records its model's shape; `trident export --model` refuses another
#     model and `--cluster` another GPU count, naming both sides, and
#     `trident emit` refuses a plan made for another model.
#
# Expected output shape: a JSON excerpt ("parallel": {... "etp": 1 ...},
# "micro_batch_size": 1, "num_micro_batches": 32, "zero_stage": 1); the
# fsdp table whose rows all read "1 1 1" for tp pp cp; the fsdp note
# "cannot run cp 2"; "model_shape" with layers 32 and hidden 4096; then
# three refusals: "the plan is for model 'llama_3_8b' but --model
# llama-2-7b is 'llama_2_7b'", "the plan uses 32 GPUs but --cluster
# dgx-h100:8 has 64", and emit's "the plan is for model 'llama_3_8b'";
# then "exported for llama-3-8b on dgx-h100:4: ok".
#
# Usage: bash python-free-examples/27-plan-record.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "\$ trident evaluate --model mixtral-8x7b --cluster dgx-h100:8 ... --json  (axes only)"
"$BIN/trident" evaluate --model mixtral-8x7b --cluster dgx-h100:8 \
  --global-batch 256 --seq-len 4096 --tp 2 --pp 4 --dp 8 --ep 4 --etp 1 \
  --vpp 2 --micro-batch 1 --sequence-parallel --recompute full --zero 1 --json |
  sed -n '/"parallel"/,/"schedule"/p'

L8=(--model llama-3-8b --cluster dgx-h100:4 --global-batch 256 --seq-len 8192)
echo
echo "\$ trident plan ${L8[*]} --runtime fsdp --top 3"
"$BIN/trident" plan "${L8[@]}" --runtime fsdp --top 3 -o "$tmp/l8.json" |
  sed -n '/^  #/,/^$/p'
echo "\$ trident evaluate ${L8[*]} --dp 16 --cp 2 --zero 3 --runtime fsdp  (stderr)"
"$BIN/trident" evaluate "${L8[@]}" --dp 16 --cp 2 --zero 3 --runtime fsdp \
  2>&1 >/dev/null | grep note

echo
echo "\$ grep -A5 model_shape l8.json"
grep -A5 '"model_shape"' "$tmp/l8.json"
for args in "--model llama-2-7b" "--cluster dgx-h100:8"; do
  echo "\$ trident export --plan l8.json --to megatron $args"
  # shellcheck disable=SC2086
  "$BIN/trident" export --plan "$tmp/l8.json" --to megatron $args 2>&1 |
    sed "s#$tmp/##g" || true
done
echo "\$ trident emit --plan l8.json --model llama-2-7b --emit texec"
"$BIN/trident" emit --plan "$tmp/l8.json" --model llama-2-7b --emit texec \
  -o "$tmp/x.mlir" 2>&1 | grep error | sed "s#$tmp/##g" || true
"$BIN/trident" export --plan "$tmp/l8.json" --to megatron --model llama-3-8b \
  --cluster dgx-h100:4 > /dev/null
echo "exported for llama-3-8b on dgx-h100:4: ok"
