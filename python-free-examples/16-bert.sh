#!/usr/bin/env bash
#===- 16-bert.sh - a BERT config: import, plan, emit and run -------------===#
#
# BERT is an encoder: attention sees the whole sequence, token-type ids are
# a second input, the last layer's first position ([CLS]) feeds a pooler and
# a next-sentence head, and the step's loss is the masked-LM mean plus the
# next-sentence mean. This example
#  1. imports Hugging Face's bert-base-uncased config (BertForMaskedLM;
#     test/data/models/) and its BertForPreTraining variant, whose
#     parameter counts are HF's (109,514,298 and 110,106,428);
#  2. emits a tiny BERT (test/e2e/models/tiny-bert.json: 4 blocks, hidden
#     64, 4 heads, 2 token types) under cp 2 x tp 2 with sequence
#     parallelism: each rank holds 8 of the 32 positions, so the [CLS] row
#     lives on one rank and is summed over tp and cp; runs it on 4 ranks and
#     on 1, and compares the losses and the final parameters;
#  3. plans the zoo's BERT-Large on 8 H100s and emits that plan's texec
#     program (trained in f32, --train-in-f32).
#
# Expected output shape: two inspect summaries, the emit lines, the texec
# lines of the bidirectional attention, the [CLS] selection and the
# next-sentence loss, "step N loss L time T" lines for 4 ranks and for 1,
# the compare tool's two "OK: ..." lines, then the BERT-Large plan's best
# row (dp 8 under ZeRO-3 when this was written) and its attention kernel.
#
# Usage: bash python-free-examples/16-bert.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
HF=test/data/models/bert-base-uncased.json
BERT=test/e2e/models/tiny-bert.json

echo "\$ trident inspect --model $HF"
"$BIN/trident" inspect --model "$HF" 2>/dev/null | sed -n '1,3p'
sed 's/BertForMaskedLM/BertForPreTraining/' "$HF" > "$tmp/bert-base-pretraining.json"
echo "\$ trident inspect --model bert-base-pretraining.json (architectures: BertForPreTraining)"
"$BIN/trident" inspect --model "$tmp/bert-base-pretraining.json" 2>/dev/null |
  sed -n '1,3p'

echo
emit_build test/e2e/plans/tiny-bert-cp2-tp2-sp.json "$BERT" "$tmp/cp2tp2"
echo "# layer 0's attention, the [CLS] row and the next-sentence loss (texec IR):"
grep -m1 'texec.kernel "attention"' "$tmp/cp2tp2/program.texec.mlir" | sed 's/^ *//'
grep -m1 -A2 'texec.kernel "select_token"' "$tmp/cp2tp2/program.texec.mlir" |
  sed 's/^ *//'
grep -m1 'texec.loss .* scale' "$tmp/cp2tp2/program.texec.mlir" | sed 's/^ *//'
run_ranks 4 cp2tp2
emit_build test/e2e/plans/tiny-bert-single.json "$BERT" "$tmp/single"
run_ranks 1 single
compare_runs single cp2tp2

echo
echo "\$ trident plan --model bert-large --cluster dgx-h100:1 --global-batch 256 --seq-len 512 -o bert-large.json"
"$BIN/trident" plan --model bert-large --cluster dgx-h100:1 --global-batch 256 \
  --seq-len 512 -o "$tmp/bert-large.json" | sed -n '1p;6,7p'
echo "\$ trident emit --plan bert-large.json --model bert-large --train-in-f32 --emit texec"
"$BIN/trident" emit --plan "$tmp/bert-large.json" --model bert-large \
  --train-in-f32 --emit texec -o "$tmp/bert-large.mlir" 2>/dev/null
grep -m1 'texec.kernel "attention"' "$tmp/bert-large.mlir" | sed 's/^ *//'
