#!/usr/bin/env bash
# A stand-in for mpirun ($MPIRUN of run-e2e-stale-report.test): runs the
# real one; when the program it launches ends in $SKEW_PROGRAM, the step-1
# loss it prints is replaced by 9.5, so that the run's losses certainly
# differ from the reference's.
set -euo pipefail
prog=""
for a in "$@"; do
  case "$a" in */train) prog="$a" ;; esac
done
if [[ $prog == *"$SKEW_PROGRAM" ]]; then
  "$REAL_MPIRUN" "$@" | sed 's/^step 1 loss [0-9.]*/step 1 loss 9.5/'
else
  exec "$REAL_MPIRUN" "$@"
fi
