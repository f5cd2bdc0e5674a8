#!/usr/bin/env bash
#===- 18-vocab-padding.sh - a vocabulary that tp does not divide ----------===#
#
# Tensor parallelism splits the embedding table and the LM head by
# vocabulary rows. When tp does not divide the vocabulary (GPT-2's 50,257
# tokens, BERT's 30,522 over tp 4), `trident emit` pads the table to a
# multiple of tp as Megatron-LM does: the last ranks hold zero rows that no
# token reads, whose logits the vocab-parallel cross-entropy leaves out of
# the softmax, so they get zero gradients and the model means what the
# single-rank run means. This example
#  1. emits a tiny BERT with a 251-token vocabulary (4 blocks, hidden 64)
#     under tp 4: the word table is padded to 252 (63 rows per rank), the
#     2 token types and the 2 next-sentence classes to 4; runs it on 4
#     ranks and on 1, and compares the losses and the final parameters
#     (the dumps hold the real rows only);
#  2. plans Hugging Face's GPT-2 config (test/data/models/gpt2.json) on a
#     DGX H100 with tp pinned to 2 and emits it: 25,129 rows per rank,
#     the second rank's last one padding.
#
# Expected output shape: the emit line, the padded texec.param lines and
# the cross-entropy's `vocab = 251`, "step N loss L time T" lines for 4
# ranks and for 1, the compare tool's two "OK: ..." lines, then GPT-2's
# padded table.
#
# Usage: bash python-free-examples/18-vocab-padding.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
BERT=test/e2e/models/tiny-bert-v251.json

emit_build test/e2e/plans/tiny-bert-v251-tp4.json "$BERT" "$tmp/tp4"
echo "# padded tables and the cross-entropy over the real vocabulary (texec IR):"
grep 'texec.param .* padded' "$tmp/tp4/program.texec.mlir" | sed 's/^ *//'
grep -m1 'texec.kernel "cross_entropy"(.*vocab = ' "$tmp/tp4/program.texec.mlir" |
  sed 's/^ *//; s/ : (.*//'
run_ranks 4 tp4
emit_build test/e2e/plans/tiny-bert-v251-single.json "$BERT" "$tmp/single"
run_ranks 1 single
compare_runs single tp4

echo
GPT2=test/data/models/gpt2.json
echo "\$ trident plan --model $GPT2 --cluster dgx-h100:1 --global-batch 64 --seq-len 1024 --fix tp=2 -o gpt2.json"
"$BIN/trident" plan --model "$GPT2" --cluster dgx-h100:1 --global-batch 64 \
  --seq-len 1024 --fix tp=2 -o "$tmp/gpt2.json" > /dev/null
echo "\$ trident emit --plan gpt2.json --model $GPT2 --emit texec"
"$BIN/trident" emit --plan "$tmp/gpt2.json" --model "$GPT2" --emit texec \
  -o "$tmp/gpt2.mlir"
grep -m1 'texec.param .* padded' "$tmp/gpt2.mlir" | sed 's/^ *//'
