#!/usr/bin/env bash
#===- 24-dlrm.sh - a recommendation model trained from its plan ---------===#
#
# DLRM (Naumov et al. 2019) has no transformer blocks: a bottom MLP on
# dense features, pooled embedding bags of sparse ids, their pairwise dot
# interaction and a top MLP to a click logit with a sigmoid binary
# cross-entropy. The tiny test model (test/e2e/models/tiny-dlrm.mlir,
# tgraph text) is emitted for dp 2 x tp 2, where every table is split by
# rows over tp (7, 23 and 3 rows padded to 8, 24 and 4) and each rank's
# partial bags are summed over tp; it is trained 3 SGD steps (lr 1, so the
# comparison checks the gradients) on 4 MPI ranks and compared with the
# single-rank run. Last, the zoo's MLPerf DLRM (26 tables, 24 B
# parameters) is planned for 16 H100s (the planner splits the tables over
# tp 8, as the program does) and lowered to texec.
#
# Expected output shape: the inspect summary, the emit lines, the texec
# lines of one bag, the interaction and the loss, "step N loss L time T"
# lines for 4 ranks and for 1, the compare tool's two "OK: ..." lines, the
# zoo plan's best row, then the zoo program's bag count, its largest
# table's shard and the interaction.
#
# Usage: bash python-free-examples/24-dlrm.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in example 10)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run/compare steps:
source python-free-examples/_emit-build.sh
DLRM=test/e2e/models/tiny-dlrm.mlir

echo "\$ trident inspect --model $DLRM"
"$BIN/trident" inspect --model "$DLRM" | sed -n '1,5p'

echo
emit_build test/e2e/plans/tiny-dlrm-dp2-tp2.json "$DLRM" "$tmp/dp2tp2" \
  --optimizer sgd --lr 1
echo "# one embedding bag (rows split over tp), the interaction, the loss (texec IR):"
ir="$tmp/dp2tp2/program.texec.mlir"
grep -m4 -E 'texec.(input "sparse.0"|kernel "(embedding|bag_pool)"|all_reduce)' \
  "$ir" | sed 's/^ *//'
grep -m1 'texec.kernel "dot_interaction"' "$ir" | sed 's/^ *//'
grep -m1 'texec.kernel "binary_cross_entropy"' "$ir" | sed 's/^ *//'
run_ranks 4 dp2tp2
emit_build test/e2e/plans/tiny-dlrm-single.json "$DLRM" "$tmp/single" \
  --optimizer sgd --lr 1
run_ranks 1 single
compare_runs single dp2tp2

echo
echo "\$ trident plan --model dlrm --cluster dgx-h100:2 --global-batch 65536 --seq-len 1 -o dlrm.json"
"$BIN/trident" plan --model dlrm --cluster dgx-h100:2 --global-batch 65536 \
  --seq-len 1 -o "$tmp/dlrm.json" | sed -n '6,7p'
echo "\$ trident emit --plan dlrm.json --model dlrm --emit texec"
"$BIN/trident" emit --plan "$tmp/dlrm.json" --model dlrm --emit texec \
  -o "$tmp/dlrm.mlir"
echo "embedding bags: $(grep -c 'texec.kernel "bag_pool"' "$tmp/dlrm.mlir")"
grep -m1 'texec.param "emb_l.0"' "$tmp/dlrm.mlir" | sed 's/^ *//'

grep -m1 'texec.kernel "dot_interaction"' "$tmp/dlrm.mlir" |
  sed 's/^ *//; s/(%.*) : (.*) -> /(27 features) -> /'
