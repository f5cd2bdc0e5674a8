#!/usr/bin/env bash
# A stand-in for mpirun (run-e2e.sh's $MPIRUN in the run-e2e-*.test
# tests) that runs the real one, $REAL_MPIRUN, and, for the program it
# launches (the argument ending in /train):
# - with ENV_LOG set, appends the program (less the $WORK_DIR/ prefix) and
#   TRIDENT_RT_DEFER_ASYNC as the ranks will see it to $ENV_LOG;
# - when the program ends in $SKEW_PROGRAM, replaces the step-1 loss it
#   prints by 9.5, so that the run's losses certainly differ from the
#   reference's.
set -euo pipefail
prog=""
for a in "$@"; do
  case "$a" in */train) prog="$a" ;; esac
done
if [ -n "${ENV_LOG:-}" ]; then
  echo "${prog#"${WORK_DIR:-}"/} defer=${TRIDENT_RT_DEFER_ASYNC:-unset}" >> "$ENV_LOG"
fi
if [ -n "${SKEW_PROGRAM:-}" ] && [[ $prog == *"$SKEW_PROGRAM" ]]; then
  "$REAL_MPIRUN" "$@" | sed 's/^step 1 loss [0-9.]*/step 1 loss 9.5/'
else
  exec "$REAL_MPIRUN" "$@"
fi
