#!/usr/bin/env bash
# A stand-in for mpicxx on PATH (run-e2e-jobs.test): records how many
# compiles run at once in $COUNT_DIR/concurrency, then runs the real one.
# Each holds its place for a second so that compiles the runner allows
# side by side do overlap.
set -euo pipefail
mkdir -p "$COUNT_DIR/running"
touch "$COUNT_DIR/running/$$"
ls "$COUNT_DIR/running" | wc -l >> "$COUNT_DIR/concurrency"
sleep 1
rm -f "$COUNT_DIR/running/$$"
exec "$REAL_MPICXX" "$@"
