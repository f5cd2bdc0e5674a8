#!/usr/bin/env bash
#===- 30-cross-validate.sh - The cost model's error out of sample --------===#
#
# Shows: the three fitted constants of the cost model (Fitted.h) refit from
# the published runs of ../shared/validation/cases.json by `trident
# validate --fit` (they come back equal to the table), then leave-one-
# source-out: each source predicted by constants fitted without it, the
# accuracy a user with an unseen model or cluster should expect.
# docs/cost-model.md section 8 explains the fit; docs/validation.md holds
# the full report.
#
# Expected output shape: the table of constants with "published" and
# "refit" columns (no "(differs)"), the objective per GPU generation and
# pooled; then
# the out-of-sample summary line "Over 200 cases: median |error| X%, 90th
# percentile Y%, ..." and one row per held-out source.
#
# Usage: bash python-free-examples/30-cross-validate.sh [cases.json]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
CASES=${1:-../shared/validation/cases.json}

run() { echo "\$ $*"; "$@"; }
run "$BIN/trident" validate --cases "$CASES" --fit
echo
echo "\$ $BIN/trident validate --cases $CASES --cross-validate | sed -n '/^## Out of sample/,\$p'"
"$BIN/trident" validate --cases "$CASES" --cross-validate |
  sed -n '/^## Out of sample/,$p'
