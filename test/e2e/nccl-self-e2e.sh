#!/usr/bin/env bash
#===- nccl-self-e2e.sh - an end-to-end run with one-rank NCCL communicators ===#
#
# usage: nccl-self-e2e.sh OUT RUN-E2E-ARGUMENT...
#
# Runs test/e2e/run-e2e.sh with the arguments given under
# TRIDENT_CUDA_NCCL_SELF=1 (the CUDA runtime gives each group of one a
# one-rank NCCL communicator), keeping its output in OUT, and requires
# both run-e2e's success and the CUDA runtime's report at finalize that
# NCCL communicators were live: a collective on a group of one returns the
# same data with or without NCCL, so the match alone would not show that
# NCCL ran. cuda-e2e.sh and scripts/gpu-device.sh call it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
  echo "nccl-self-e2e.sh: usage: nccl-self-e2e.sh OUT RUN-E2E-ARGUMENT..." >&2
  exit 2
fi
out=$1
shift
mkdir -p "$(dirname "$out")"
TRIDENT_CUDA_NCCL_SELF=1 bash "$here/run-e2e.sh" "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo "nccl-self-e2e: run-e2e.sh failed (exit $rc)" >&2
  exit 1
fi
if ! grep -Eq 'TRIDENT_CUDA_NCCL_SELF=1: [1-9][0-9]* NCCL communicators live at finalize' "$out"; then
  echo "nccl-self-e2e: the run used no NCCL communicator (no report at finalize)" >&2
  exit 1
fi
