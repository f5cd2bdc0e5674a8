#!/usr/bin/env bash
#===- 14-dropout-and-windows.sh - dropout and sliding windows, run -------===#
#
# Shows model features that the emitted programs now run:
#  1. dropout (GPT-2's default 0.1 on the embeddings, the attention
#     probabilities and both residual branches): a tiny GPT-2 config
#     (test/e2e/models/tiny-gpt2-dropout.json: 4 blocks, hidden 64, 4
#     heads) emitted under dp 2 x tp 2 with sequence parallelism. Every
#     rank draws the mask of each element it holds from the element's
#     global (sample, position, feature) or (sample, head, query, key), so
#     the 4-rank run drops exactly what the 1-rank run drops. Trained with
#     SGD at lr 1, so the parameters move by the gradients themselves;
#  2. a sliding window (tiny Mistral, test/e2e/models/tiny-mistral.json:
#     window 8 of 32 positions): the texec attention under cp 2 x tp 2
#     carries the window, and the queries of the second cp chunk see the
#     last 8 keys of the gathered sequence;
#  3. Nemotron's zero-centred LayerNorm1p and squared-ReLU MLP (tiny
#     Nemotron, test/e2e/models/tiny-nemotron.json): the texec layer norm
#     scales by gamma + 1 (gamma_shift) from weights that start at 0.
#
# Expected output shape: the emit lines, the texec lines of the first
# dropouts and attention, "step N loss L time T" lines for 4 ranks and for
# 1, the compare tool's two "OK: ..." lines, then the windowed attention
# and Nemotron's norm and activation.
#
# Usage: bash python-free-examples/14-dropout-and-windows.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
GPT2=test/e2e/models/tiny-gpt2-dropout.json

emit_build test/e2e/plans/tiny-gpt2-dropout-dp2-tp2-sp.json "$GPT2" \
  "$tmp/dp2tp2" --optimizer sgd --lr 1
echo "# the embedding's dropout and layer 0's attention (texec IR):"
grep -m2 -E 'texec.kernel "(dropout|attention)"' \
  "$tmp/dp2tp2/program.texec.mlir" | sed 's/^ *//'
run_ranks 4 dp2tp2
emit_build test/e2e/plans/tiny-gpt2-dropout-single.json "$GPT2" \
  "$tmp/single" --optimizer sgd --lr 1
run_ranks 1 single
compare_runs single dp2tp2

echo
echo "\$ trident emit --plan test/e2e/plans/tiny-mistral-cp2-tp2-sp.json --model test/e2e/models/tiny-mistral.json --emit texec"
"$BIN/trident" emit --plan test/e2e/plans/tiny-mistral-cp2-tp2-sp.json \
  --model test/e2e/models/tiny-mistral.json --emit texec -o "$tmp/mistral.mlir"
grep -m1 'texec.kernel "attention"' "$tmp/mistral.mlir" | sed 's/^ *//'

echo
echo "\$ trident emit --plan test/e2e/plans/tiny-nemotron-tp2-sp.json --model test/e2e/models/tiny-nemotron.json --emit texec"
"$BIN/trident" emit --plan test/e2e/plans/tiny-nemotron-tp2-sp.json \
  --model test/e2e/models/tiny-nemotron.json --emit texec -o "$tmp/nemotron.mlir"
grep -m1 'texec.param "layers.0.input_layernorm.weight"' "$tmp/nemotron.mlir" |
  sed 's/^ *//'
for k in layer_norm squared_relu; do
  grep -m1 "texec.kernel \"$k\"" "$tmp/nemotron.mlir" | sed 's/^ *//'
done
