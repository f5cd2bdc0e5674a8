#!/usr/bin/env bash
#===- 17-vit.sh - a ViT config: import, plan, emit and run ---------------===#
#
# A vision transformer reads images: each is cut into patches that a linear
# map turns into tokens, a learned class token goes first, and the
# classifier reads that token after the last layer. This example
#  1. imports Hugging Face's google/vit-base-patch16-224 config
#     (test/data/models/), whose parameter count is HF's (86,567,656);
#  2. emits a tiny ViT (test/e2e/models/tiny-vit.json: 12x12 RGB images in
#     4x4 patches, 9 patch tokens + the class token, 4 blocks, 10 classes)
#     under tp 2 x pp 2: stage 0 embeds the patches, stage 1 classifies;
#     runs it on 4 ranks and on 1 (SGD at lr 1, which compares the
#     gradients themselves; docs/emit.md says why not Adam here) and
#     compares the losses and the final parameters;
#  3. plans the zoo's ViT-H/14 on one DGX H100 and emits that plan's texec
#     program (trained in f32, --train-in-f32).
#
# Expected output shape: the inspect summary, the emit line, the texec
# lines of the image input, patch embedding, class token and positions,
# "step N loss L time T" lines for 4 ranks and for 1, the compare tool's two
# "OK: ..." lines, then the ViT-H/14 plan's best row and its patch
# embedding.
#
# Usage: bash python-free-examples/17-vit.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
HF=test/data/models/vit-base-patch16-224.json
VIT=test/e2e/models/tiny-vit.json

echo "\$ trident inspect --model $HF"
"$BIN/trident" inspect --model "$HF" | sed -n '1,3p'

echo
emit_build test/e2e/plans/tiny-vit-tp2-pp2.json "$VIT" "$tmp/tp2pp2" \
  --optimizer sgd --lr 1
echo "# stage 0's images, patches, class token and positions (texec IR):"
grep -m4 -E 'texec.(input "images"|kernel "(patch_embed|prepend_token|position_add)")' \
  "$tmp/tp2pp2/program.texec.mlir" | sed 's/^ *//'
run_ranks 4 tp2pp2
emit_build test/e2e/plans/tiny-vit-single.json "$VIT" "$tmp/single" \
  --optimizer sgd --lr 1
run_ranks 1 single
compare_runs single tp2pp2

echo
echo "\$ trident plan --model vit-h-14 --cluster dgx-h100:1 --global-batch 256 --seq-len 257 -o vit-h-14.json"
"$BIN/trident" plan --model vit-h-14 --cluster dgx-h100:1 --global-batch 256 \
  --seq-len 257 -o "$tmp/vit-h-14.json" | sed -n '1p;6,7p'
echo "\$ trident emit --plan vit-h-14.json --model vit-h-14 --train-in-f32 --emit texec"
"$BIN/trident" emit --plan "$tmp/vit-h-14.json" --model vit-h-14 \
  --train-in-f32 --emit texec -o "$tmp/vit-h-14.mlir" 2>/dev/null
grep -m1 'texec.kernel "patch_embed"' "$tmp/vit-h-14.mlir" | sed 's/^ *//'
