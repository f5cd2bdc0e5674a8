#!/usr/bin/env bash
#===- 20-gpt-oss.sh - gpt-oss: sinks, biased experts, YaRN, and it runs ---===#
#
# gpt-oss (OpenAI 2025) differs from a Mixtral-style model in four places
# the emitted program must honour: each attention head has a learned sink
# logit that joins its softmax without a value; the router and every
# expert linear have biases; the experts use a clamped SwiGLU ((up + 1) *
# gate * sigmoid(1.702 gate), gate and up clamped at swiglu_limit); and
# RoPE is YaRN-scaled (factor 32 from 4,096 positions, cos and sin times
# 0.1 ln 32 + 1). This example
#  1. imports gpt-oss-20b's released config.json and shows the tgraph
#     attention (sinks, window 128, rope_scaling) and mixture of experts
#     (router and expert biases, swiglu_limit 7);
#  2. plans it on 4 DGX H100 nodes and emits the texec IR of the plan;
#  3. emits tiny-gpt-oss (test/e2e/models/tiny-gpt-oss.json: 4 layers
#     alternating windows of 8 and full attention, 4 experts top 2,
#     swiglu_limit 0.05 so that the clamps act at this scale, YaRN factor
#     4) under context parallelism 2 x tensor parallelism 2 with sequence
#     parallelism, and shows the sinks split with the heads and the
#     scaled RoPE of one chunk;
#  4. runs 3 SGD steps (lr 1: parameters move by their gradients) on 4
#     MPI ranks and on 1, compared by
#     trident-compare-params (losses within 1e-5 relative, parameters
#     within 1e-5 relative + 1e-5 absolute).
#
# Expected output shape: the tgraph attention and moe lines; the plan
# line; the sinks and expert bias parameters of gpt-oss-20b's program;
# tiny-gpt-oss's sinks, its first scaled rope kernel and its first
# attention_sinks kernel; "step N loss L time T" lines for 4 ranks and for
# 1; the compare tool's two "OK: ..." lines.
#
# Usage: bash python-free-examples/20-gpt-oss.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
OSS=test/data/models/gpt-oss-20b.json
MODEL=test/e2e/models/tiny-gpt-oss.json

echo "\$ trident import --model $OSS"
"$BIN/trident" import --model "$OSS" -o "$tmp/oss.mlir" 2> /dev/null
grep -m1 'tgraph.attention' "$tmp/oss.mlir" | sed 's/^ *//; s/ : (.*//'
grep -m1 'tgraph.moe' "$tmp/oss.mlir" | sed 's/^ *//; s/ : (.*//'

echo "\$ trident plan --model $OSS --cluster dgx-h100:4 --global-batch 256 --seq-len 4096 -o oss.json"
"$BIN/trident" plan --model "$OSS" --cluster dgx-h100:4 --global-batch 256 \
  --seq-len 4096 -o "$tmp/oss.json" 2> /dev/null | sed -n '6,7p'
echo "\$ trident emit --plan oss.json --model $OSS --emit texec --train-in-f32"
"$BIN/trident" emit --plan "$tmp/oss.json" --model "$OSS" --emit texec \
  --train-in-f32 -o "$tmp/oss.texec.mlir" 2> /dev/null
grep -m1 'texec.param "layers.0.sub0.attn.sinks' "$tmp/oss.texec.mlir" |
  sed 's/^ *//'
grep -m2 'texec.param "layers.0.sub0.moe.experts.b_' "$tmp/oss.texec.mlir" |
  sed 's/^ *//'

echo
emit_build test/e2e/plans/tiny-gpt-oss-cp2-tp2-sp.json "$MODEL" "$tmp/cp" \
  --optimizer sgd --lr 1
echo "# tiny-gpt-oss's sinks, first rope and first attention (texec IR):"
grep -m1 'texec.param "layers.0.sub0.attn.sinks' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//'
grep -m1 'texec.kernel "rope"' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//; s/ : (.*//'
grep -m1 'texec.kernel "attention_sinks"' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//; s/ : (.*//'
run_ranks 4 cp
emit_build test/e2e/plans/tiny-gpt-oss-single.json "$MODEL" "$tmp/single" \
  --optimizer sgd --lr 1
run_ranks 1 single
compare_runs single cp
