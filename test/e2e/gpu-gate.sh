#!/usr/bin/env bash
#===- gpu-gate.sh - run a GPU test where a GPU is visible, else skip (77) --===#
#
# usage: gpu-gate.sh [--ranks N] COMMAND [ARG...]
#
# ctest registers the CUDA runtime's tests (runtime-smoke-cuda,
# runtime-smoke-cuda-nccl-self, runtime-mpi-4-cuda, e2e-cuda) through this
# gate wherever the CUDA runtime is built and mpirun is found. On a machine
# with a GPU (`nvidia-smi -L` lists one) it runs COMMAND and exits with its
# status; elsewhere it prints why and exits 77, which the tests declare as
# SKIP_RETURN_CODE, so ctest reports them as skipped, not passed.
# TRIDENT_GPU_TESTS=0 skips them on a GPU machine too.
#
# The GPUs' compute mode (read, never changed): under Prohibited no process
# may use a GPU, so every test is skipped; under Exclusive_Process one
# process per GPU, so a test of --ranks N processes (ranks share GPUs
# round-robin, docs/runtime.md "Rank mapping") is skipped when N exceeds
# the GPUs. Both skips name the mode.
set -uo pipefail
ranks=1
if [ "${1:-}" = --ranks ]; then
  case "${2:-}" in
  ''|*[!0-9]*|0*) echo "gpu-gate.sh: --ranks expects a positive integer, got '${2:-}'" >&2
                  exit 2 ;;
  esac
  ranks=$2
  shift 2
fi
if [ $# -eq 0 ]; then
  echo "gpu-gate.sh: usage: gpu-gate.sh [--ranks N] COMMAND [ARG...]" >&2
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
gpus=$(grep -c '^GPU ' <<<"$list")
modes=$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null || true)
if grep -qi 'prohibited' <<<"$modes"; then
  echo "gpu-gate: skipped, a GPU's compute mode is Prohibited (no process may use it): $1"
  exit 77
fi
if grep -qi 'exclusive' <<<"$modes" && [ "$ranks" -gt "$gpus" ]; then
  echo "gpu-gate: skipped, compute mode Exclusive_Process admits one process" \
       "per GPU and this test runs $ranks ranks on $gpus GPU(s): $1"
  exit 77
fi
echo "gpu-gate: $gpus GPU(s) visible; running $1"
"$@"
rc=$?
# A command that itself exits 77 did not skip: it failed.
[ $rc -eq 77 ] && rc=1
exit $rc
