#!/usr/bin/env bash
#===- test/golden/capture.sh - Trident's outputs for a fixed set of cases -===#
#
# Usage: capture.sh BUILD_DIR OUT_DIR
#
# Runs the planner, evaluator, exporters, emitter, validation and the pass
# pipelines on a fixed set of inputs and writes what each printed to a file
# of OUT_DIR. A refactoring that only changes the design must leave every
# file byte-identical: test/golden/check.sh compares a fresh capture with
# test/golden/expected/ (plans, exports, reports and validation in full;
# the emitted programs, which are large, as SHA-256 sums in
# expected/emitted.sha256). After a deliberate change of output, regenerate
# with `bash test/golden/capture.sh build test/golden/expected` and review
# the diff (docs/architecture.md, "Golden outputs").
#
#===----------------------------------------------------------------------===#
set -euo pipefail

build="$(cd "$1" && pwd)"
out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
trident="$build/bin/trident"
opt="$build/bin/trident-opt"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run NAME CMD...: CMD's stdout, then its stderr and exit code, to OUT/NAME.
run() {
  local name="$1"
  shift
  local rc=0
  "$@" >"$out/$name" 2>"$tmp/stderr" || rc=$?
  # Error messages are outputs too; a path of this run's temporary folder
  # would differ from run to run.
  sed "s#$tmp#TMP#g; s#$root#ROOT#g" "$tmp/stderr" >>"$out/$name"
  echo "# exit $rc" >>"$out/$name"
}

# --- plans (JSON; --threads 1 and 2 must agree, checked below) ---------------
plan_case() {
  local name="$1"
  shift
  run "plan-$name.json" "$trident" plan --json --top 3 --threads 2 "$@"
  "$trident" plan --top 3 --threads 2 -o "$tmp/plan-$name.json" "$@" \
    >/dev/null 2>&1 || true
}
plan_case gpt3-175b --model gpt3-175b --cluster dgx-a100-80gb:128 \
  --global-batch 1536 --seq-len 2048
plan_case llama3-70b --model llama-3-70b --cluster dgx-h100:64 \
  --global-batch 1024 --seq-len 4096
plan_case llama3-8b-fsdp --model llama-3-8b --cluster dgx-h100:4 \
  --global-batch 256 --seq-len 8192 --runtime fsdp
plan_case mixtral --model mixtral-8x7b --cluster dgx-h100:16 \
  --global-batch 512 --seq-len 4096
plan_case gpt3-megatron-lm --model gpt3-175b --cluster dgx-a100-80gb:64 \
  --global-batch 1536 --seq-len 2048 --runtime megatron-lm --fix tp=8,pp=8
plan_case llama3-8b-torchtitan --model llama-3-8b --cluster dgx-h100:8 \
  --global-batch 128 --seq-len 8192 --runtime torchtitan
plan_case tiny-gpt-trident --model tiny-gpt --cluster dgx-h100:1 \
  --global-batch 16 --seq-len 32 --runtime trident --precision fp32
plan_case llama3-70b-deepspeed --model llama-3-70b --cluster dgx-h100:32 \
  --global-batch 512 --seq-len 4096 --export deepspeed
plan_case mixed --model llama-3-70b \
  --cluster "$here/inputs/mixed-h100-a100.json" \
  --global-batch 512 --seq-len 4096
plan_case gpt3-priced --model gpt3-175b --cluster dgx-h100:64 \
  --global-batch 1536 --seq-len 2048 --price-per-gpu-hour 2.5

# --- evaluate (text and JSON) -----------------------------------------------
eval_case() {
  local name="$1"
  shift
  run "evaluate-$name.txt" "$trident" evaluate "$@"
  run "evaluate-$name.json" "$trident" evaluate --json "$@"
}
eval_case gpt3-ptd --model gpt3-175b --cluster dgx-a100-80gb:192 \
  --global-batch 1536 --seq-len 2048 --tp 8 --pp 12 --dp 16 \
  --recompute full --micro-batch 1
eval_case llama-cp --model llama-3-70b --cluster dgx-h100:64 \
  --global-batch 1024 --seq-len 8192 --tp 8 --pp 4 --dp 8 --cp 2 \
  --sequence-parallel --zero 1 --vpp 5 --micro-batch 1
eval_case mixtral-ep --model mixtral-8x7b --cluster dgx-h100:8 \
  --global-batch 256 --seq-len 4096 --tp 2 --pp 2 --dp 16 --ep 8 \
  --sequence-parallel --zero 1 --recompute selective --micro-batch 1
eval_case stage-recompute --model llama-3-70b --cluster dgx-h100:16 \
  --global-batch 512 --seq-len 4096 --tp 8 --pp 4 --dp 4 \
  --recompute full,full,none,none --micro-batch 1
eval_case gpipe-too-big --model llama-3-70b --cluster dgx-h100:16 \
  --global-batch 512 --seq-len 4096 --tp 8 --pp 4 --dp 4 \
  --recompute full --micro-batch 1 --schedule gpipe

# --- exports of the planned plans -------------------------------------------
for p in "$tmp"/plan-*.json; do
  [ -f "$p" ] || continue
  n="$(basename "$p" .json)"
  for t in megatron megatron-bridge deepspeed torchtitan; do
    run "export-$n-$t.txt" "$trident" export --plan "$p" --to "$t"
  done
done

# --- emitted programs of the end-to-end plans (SHA-256) ---------------------
e2e="$root/test/e2e"
: >"$out/emitted.sha256"
# hash_emit LABEL EMIT-ARGS...: the SHA-256 of what `trident emit` writes,
# or its exit code, as one line of emitted.sha256.
hash_emit() {
  local label="$1" rc=0
  shift
  "$trident" emit "$@" -o "$tmp/emitted" >/dev/null 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    echo "$(sha256sum <"$tmp/emitted" | cut -d' ' -f1)  $label" \
      >>"$out/emitted.sha256"
  else
    echo "exit $rc  $label" >>"$out/emitted.sha256"
  fi
}
for p in "$e2e"/plans/*.json; do
  n="$(basename "$p" .json)"
  m="$(sed -n 's/^  "model": "\(.*\)",$/\1/p' "$p")"
  if [ -f "$e2e/models/$m.json" ]; then m="$e2e/models/$m.json"
  elif [ -f "$e2e/models/$m.mlir" ]; then m="$e2e/models/$m.mlir"; fi
  for b in cpu cuda; do
    hash_emit "$n $b main.cpp" --plan "$p" --model "$m" --backend "$b" \
      --emit cpp --train-in-f32
  done
  hash_emit "$n texec" --plan "$p" --model "$m" --emit texec --train-in-f32
done

# --- validation --------------------------------------------------------------
run validate.txt "$trident" validate
shared="${TRIDENT_SHARED_DIR:-$root/../shared}/validation"
if [ -f "$shared/moe_cases.json" ]; then
  run validate-moe.txt "$trident" validate --cases "$shared/moe_cases.json"
fi

# --- pass pipelines -----------------------------------------------------------
"$trident" import --model "$e2e/models/tiny-llama.json" -o "$tmp/tiny-llama.mlir" >/dev/null
"$trident" plan --model "$e2e/models/tiny-llama.json" --cluster dgx-h100:1 --global-batch 16 \
  --seq-len 32 --fix tp=2,pp=2 -o "$tmp/tl-plan.json" >/dev/null 2>&1 || true
run opt-apply-plan.mlir "$opt" "$tmp/tiny-llama.mlir" \
  "--pass-pipeline=builtin.module(tgraph.model(trident-apply-plan{plan=$tmp/tl-plan.json}))"
run opt-export-shard.mlir "$opt" "$tmp/tiny-llama.mlir" \
  "--pass-pipeline=builtin.module(tgraph.model(trident-apply-plan{plan=$tmp/tl-plan.json}),trident-export-shard)"
run opt-plan.mlir "$opt" "$tmp/tiny-llama.mlir" \
  "--pass-pipeline=builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1 global-batch=16}))"
run opt-costs.mlir "$opt" "$tmp/tiny-llama.mlir" \
  "--pass-pipeline=builtin.module(tgraph.model(trident-annotate-costs{batch=2}))"

# --- inspect -------------------------------------------------------------------
for m in gpt3-175b llama-3-70b mixtral-8x7b tiny-gpt; do
  run "inspect-$m.json" "$trident" inspect --model "$m" --json
done

# --- shard export of a GPT (the llama above has RoPE, which it refuses) -------
"$trident" import --model tiny-gpt -o "$tmp/tiny-gpt.mlir" >/dev/null
"$trident" plan --model tiny-gpt --cluster dgx-h100:1 --global-batch 16 \
  --seq-len 32 --fix tp=2,dp=2,pp=2 -o "$tmp/tg-plan.json" >/dev/null 2>&1 || true
run opt-export-shard-gpt.mlir "$opt" "$tmp/tiny-gpt.mlir" \
  "--pass-pipeline=builtin.module(tgraph.model(trident-apply-plan{plan=$tmp/tg-plan.json}),trident-export-shard)"
