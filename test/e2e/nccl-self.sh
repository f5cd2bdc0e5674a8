#!/usr/bin/env bash
#===- nccl-self.sh - a run with one-rank NCCL communicators, checked ------===#
#
# usage: nccl-self.sh OUT COMMAND [ARG...]
#
# Runs COMMAND under TRIDENT_CUDA_NCCL_SELF=1 (the CUDA runtime gives each
# group of one a one-rank NCCL communicator), keeping its output (stdout
# and stderr) in OUT as well as printing it, and requires both COMMAND's
# success and the CUDA runtime's report at finalize that NCCL
# communicators were created and NCCL operations issued on them: a
# collective on a group of one returns the same data with or without NCCL,
# so success alone would not show that NCCL ran. (Communicators live at
# finalize would not do: an emitted program releases its grid, and with
# it every communicator, before it calls finalize; the emulated backend's
# run of cuda-e2e.sh showed it.) Used for the smoke test (ctest
# runtime-smoke-cuda-nccl-self and runtime-smoke-cuda-emu-nccl-self,
# gpu-check.sh, gpu-device.sh).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "nccl-self.sh: usage: nccl-self.sh OUT COMMAND [ARG...]" >&2
  exit 2
fi
out=$1
shift
mkdir -p "$(dirname "$out")"
TRIDENT_CUDA_NCCL_SELF=1 "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo "nccl-self: $1 failed (exit $rc)" >&2
  exit 1
fi
if ! grep -Eq 'TRIDENT_CUDA_NCCL_SELF=1: [1-9][0-9]* NCCL communicators created, [1-9][0-9]* NCCL operations issued' "$out"; then
  echo "nccl-self: $1 used no NCCL communicator (no report at finalize of communicators created and operations issued)" >&2
  exit 1
fi
echo "nccl-self: passed, with NCCL communicators"
