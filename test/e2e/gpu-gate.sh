#!/usr/bin/env bash
#===- gpu-gate.sh - run a GPU test where a GPU is visible, else skip (77) --===#
#
# usage: gpu-gate.sh COMMAND [ARG...]
#
# ctest registers the CUDA runtime's tests (runtime-smoke-cuda,
# runtime-smoke-cuda-nccl-self, runtime-mpi-4-cuda, e2e-cuda) through this
# gate wherever the CUDA runtime is built and mpirun is found. On a machine with a GPU (`nvidia-smi -L` lists one) it runs
# COMMAND and exits with its status; elsewhere it prints why and exits 77,
# which the tests declare as SKIP_RETURN_CODE, so ctest reports them as
# skipped, not passed. TRIDENT_GPU_TESTS=0 skips them on a GPU machine too.
set -uo pipefail
if [ $# -eq 0 ]; then
  echo "gpu-gate.sh: usage: gpu-gate.sh COMMAND [ARG...]" >&2
  exit 2
fi
if [ "${TRIDENT_GPU_TESTS:-1}" = 0 ]; then
  echo "gpu-gate: skipped (TRIDENT_GPU_TESTS=0): $1"
  exit 77
fi
if ! list=$(nvidia-smi -L 2>/dev/null) || ! grep -q '^GPU ' <<<"$list"; then
  echo "gpu-gate: skipped, no GPU visible (nvidia-smi -L lists none): $1"
  exit 77
fi
echo "gpu-gate: $(grep -c '^GPU ' <<<"$list") GPU(s) visible; running $1"
"$@"
rc=$?
# A command that itself exits 77 did not skip: it failed.
[ $rc -eq 77 ] && rc=1
exit $rc
