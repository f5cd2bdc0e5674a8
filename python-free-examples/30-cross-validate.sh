#!/usr/bin/env bash
#===- 30-cross-validate.sh - The cost model's error out of sample --------===#
#
# Shows: the four fitted constants of the cost model (Fitted.h) refit from
# every published run of ../shared/validation (cases.json and the MoE runs
# of moe_cases.json, these with the dispatcher and exchange overlap their
# scripts ran, test/data/validation/mbridge-moe-as-ran.json) by `trident
# validate --fit` (they come back equal to the table), then leave-one-
# source-out: each source (and each Megatron-Bridge release) predicted by
# constants fitted without it, the accuracy a user with an unseen model or
# cluster should expect. docs/cost-model.md section 8 explains the fit;
# docs/validation.md holds the full report.
#
# Expected output shape: the table of constants with "published" and
# "refit" columns (no "(differs)"), the objective per GPU generation,
# pooled and for the MoE layer; then the out-of-sample summary line "Over
# 208 cases: median |error| X%, 90th percentile Y%, ..." and one row per
# held-out source.
#
# Usage: bash python-free-examples/30-cross-validate.sh [SHARED_VALIDATION_DIR]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
DATA=${1:-../shared/validation}
ARGS=(--cases "$DATA/cases.json" --cases "$DATA/moe_cases.json"
      --as-ran test/data/validation/mbridge-moe-as-ran.json)

run() { echo "\$ $*"; "$@"; }
run "$BIN/trident" validate "${ARGS[@]}" --fit
echo
echo "\$ $BIN/trident validate ${ARGS[*]} --cross-validate | sed -n '/^## Out of sample/,\$p'"
"$BIN/trident" validate "${ARGS[@]}" --cross-validate |
  sed -n '/^## Out of sample/,$p'
