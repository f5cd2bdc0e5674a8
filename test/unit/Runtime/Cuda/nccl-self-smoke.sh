#!/usr/bin/env bash
#===- nccl-self-smoke.sh - the smoke test with one-rank NCCL communicators ===#
#
# usage: nccl-self-smoke.sh MPIEXEC SMOKE
#
# ctest's runtime-smoke-cuda-nccl-self (through test/e2e/gpu-gate.sh): runs
# the CUDA smoke test on one rank under TRIDENT_CUDA_NCCL_SELF=1 and
# requires both its PASSED line and the runtime's report that NCCL
# communicators were live at finalize, so that the test fails when the
# groups of one did not go through NCCL (the data of a collective on a
# group of one comes back unchanged either way).
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "nccl-self-smoke.sh: usage: nccl-self-smoke.sh MPIEXEC SMOKE" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
TRIDENT_CUDA_NCCL_SELF=1 "$1" -np 1 --allow-run-as-root "$2" > "$log" 2>&1
rc=$?
cat "$log"
if [ $rc -ne 0 ] || ! grep -q '^cuda smoke: PASSED' "$log"; then
  echo "nccl-self-smoke: the smoke test failed (exit $rc)" >&2
  exit 1
fi
if ! grep -Eq 'TRIDENT_CUDA_NCCL_SELF=1: [1-9][0-9]* NCCL communicators live at finalize' "$log"; then
  echo "nccl-self-smoke: no NCCL communicator was used (the groups of one" \
       "did not go through NCCL)" >&2
  exit 1
fi
echo "nccl-self-smoke: PASSED with NCCL communicators"
