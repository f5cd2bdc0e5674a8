#!/usr/bin/env bash
#===- 21-deepseek-mla.sh - DeepSeek's multi-head latent attention runs ---===#
#
# Multi-head latent attention (DeepSeek-V2 and V3) projects q and kv
# through low-rank latents; every key head is its own non-rotary part
# followed by one rotary key that all heads share; value heads are
# narrower than query/key heads (128 against 192 in DeepSeek-V3), and the
# YaRN checkpoints scale the softmax by mscale^2. This example
#  1. imports DeepSeek-V3's released config.json and shows its tgraph
#     attention (rope_key, v_head_dim, softmax_scale) and mixture of
#     experts (sigmoid scores, the selection-only bias, 8 groups of which
#     4 are kept, weights times 2.5);
#  2. emits tiny-deepseek (test/e2e/models/tiny-deepseek.json: 4 dense
#     layers, 4 heads of 16 = 8 + 8 rotary, v heads of 12, q and kv
#     latents of 24 and 16, YaRN factor 4) under context parallelism 2 x
#     tensor parallelism 2 with sequence parallelism, and shows q's rope
#     on the last 8 dimensions of each head, the shared key's rope, the
#     latent_key kernel and the attention;
#  3. runs 3 SGD steps (lr 1: parameters move by their gradients) on 4
#     MPI ranks and on 1, compared by trident-compare-params (losses
#     within 1e-5 relative, parameters within 1e-5 relative + 1e-5
#     absolute).
#
# Expected output shape: the tgraph attention and moe lines; the four texec kernel
# lines; "step N loss L time T" lines for 4 ranks and for 1; the compare
# tool's two "OK: ..." lines.
#
# Usage: bash python-free-examples/21-deepseek-mla.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
DS=test/data/models/deepseek-v3.json
MODEL=test/e2e/models/tiny-deepseek.json

echo "\$ trident import --model $DS"
"$BIN/trident" import --model "$DS" -o "$tmp/ds.mlir" 2> /dev/null
grep -m1 'tgraph.attention' "$tmp/ds.mlir" | sed 's/^ *//; s/ : (.*//'
grep -m1 'tgraph.moe' "$tmp/ds.mlir" | sed 's/^ *//; s/ : (.*//'

echo
emit_build test/e2e/plans/tiny-deepseek-cp2-tp2-sp.json "$MODEL" "$tmp/cp" \
  --optimizer sgd --lr 1
echo "# tiny-deepseek's first ropes, key heads and attention (texec IR):"
grep -m2 'texec.kernel "rope"' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//; s/ scaling = {[^}]*},//; s/ : (.*//'
grep -m1 'texec.kernel "latent_key"' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//; s/ : (.*//'
grep -m1 'texec.kernel "attention"' "$tmp/cp/program.texec.mlir" |
  sed 's/^ *//; s/ : (.*//'
run_ranks 4 cp
emit_build test/e2e/plans/tiny-deepseek-single.json "$MODEL" "$tmp/single" \
  --optimizer sgd --lr 1
run_ranks 1 single
compare_runs single cp
