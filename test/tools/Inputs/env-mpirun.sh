#!/usr/bin/env bash
# A stand-in for mpirun ($MPIRUN of run-e2e-deferred.test): appends the
# program it launches and TRIDENT_RT_DEFER_ASYNC as the ranks will see it
# to $ENV_LOG, then runs the real one.
set -euo pipefail
prog=""
for a in "$@"; do
  case "$a" in */train) prog="$a" ;; esac
done
echo "${prog#"$WORK_DIR"/} defer=${TRIDENT_RT_DEFER_ASYNC:-unset}" >> "$ENV_LOG"
exec "$REAL_MPIRUN" "$@"
