#!/usr/bin/env bash
#===- test/golden/check.sh - outputs unchanged against test/golden/expected -===#
#
# Usage: check.sh BUILD_DIR
#
# Captures the outputs of capture.sh's cases afresh and compares them with
# the recorded ones; any difference fails, with the diff. A deliberate change
# of output is recorded by running capture.sh into expected/ and committing
# the reviewed diff with the change.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
bash "$here/capture.sh" "$1" "$fresh"
if diff -ru "$here/expected" "$fresh" >"$fresh.diff"; then
  echo "golden: $(ls "$fresh" | wc -l) outputs unchanged"
  rm -f "$fresh.diff"
else
  echo "golden: outputs differ from test/golden/expected" \
       "(regenerate with: bash test/golden/capture.sh BUILD test/golden/expected)"
  head -c 20000 "$fresh.diff"
  rm -f "$fresh.diff"
  exit 1
fi
