#!/usr/bin/env bash
# A stand-in for mpicxx on PATH (run-e2e-object-cache.test): appends its
# arguments, one call a line, to $MPICXX_LOG, then runs the real one.
set -euo pipefail
echo "mpicxx $*" >> "$MPICXX_LOG"
exec "$REAL_MPICXX" "$@"
