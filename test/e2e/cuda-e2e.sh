#!/usr/bin/env bash
#===- cuda-e2e.sh - the CUDA end-to-end tests (run on a GPU machine) -----===#
#
# usage: cuda-e2e.sh --build-dir BUILD [--work DIR] [--jobs N] [--dry-run]
#
# Runs the end-to-end plans of scripts/gpu-check.sh (`gpu-check.sh
# --list-plans`: the issue's nine plans and one per later feature) on the
# CUDA runtime, each held to the CPU runtime's single-rank run
# (run-e2e.sh --backend cuda --reference-backend cpu): first the Adam
# plans (3 steps, every loss and final parameter within 1e-5), then the SGD
# ones (lr 1, which compares the gradients), then the single-rank run with
# one-rank NCCL communicators (TRIDENT_CUDA_NCCL_SELF=1). BUILD needs the CUDA and CPU
# runtime archives, trident and trident-compare-params (the main build has
# them). Work goes to DIR/e2e-cuda, DIR/e2e-cuda-sgd and
# DIR/e2e-cuda-nccl-self (default DIR: BUILD/test/e2e). Every run goes
# ahead when an earlier one fails; the exit status is 1 if any failed. ctest's e2e-cuda calls it through gpu-gate.sh; gpu-check.sh calls
# it directly. --dry-run prints the three command lines instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="" work="" jobs=1 dry=0
# value FLAG [VALUE]: VALUE, or an error naming FLAG when it is missing.
value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then
    echo "cuda-e2e.sh: $1 needs a value" >&2
    exit 2
  fi
  printf '%s' "$2"
}
while [ $# -gt 0 ]; do
  case "$1" in
  --build-dir) build=$(value "$@") || exit 2; shift 2 ;;
  --work) work=$(value "$@") || exit 2; shift 2 ;;
  --jobs) jobs=$(value "$@") || exit 2; shift 2 ;;
  --dry-run) dry=1; shift ;;
  *) echo "cuda-e2e.sh: unknown argument '$1' (expected --build-dir BUILD," \
          "--work DIR, --jobs N or --dry-run)" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ]; then
  echo "cuda-e2e.sh: --build-dir BUILD is required" >&2
  exit 2
fi
case "$jobs" in
''|*[!0-9]*|0*) echo "cuda-e2e.sh: --jobs expects a positive integer, got '$jobs'" >&2; exit 2 ;;
esac
work=${work:-$build/test/e2e}
adam=() sgd=()
while read -r kind plan; do
  case "$kind" in
  adam) adam+=("$plan") ;;
  sgd) sgd+=("$plan") ;;
  *) echo "cuda-e2e.sh: unexpected line from gpu-check.sh --list-plans: '$kind $plan'" >&2
     exit 2 ;;
  esac
done < <(bash "$root/scripts/gpu-check.sh" --list-plans)
if [ ${#adam[@]} -eq 0 ] || [ ${#sgd[@]} -eq 0 ]; then
  echo "cuda-e2e.sh: gpu-check.sh --list-plans listed no Adam or no SGD plan" >&2
  exit 2
fi
common=(--backend cuda --reference-backend cpu --build-dir "$build" --jobs "$jobs")
cmd_adam=(bash "$here/run-e2e.sh" "${common[@]}" --work "$work/e2e-cuda" "${adam[@]}")
cmd_sgd=(bash "$here/run-e2e.sh" "${common[@]}" --work "$work/e2e-cuda-sgd"
         --optimizer sgd --lr 1 "${sgd[@]}")
# One rank whose groups of one hold one-rank NCCL communicators
# (TRIDENT_CUDA_NCCL_SELF=1): the program's gradient sums, vocabulary
# maxima and the like run through NCCL and its events on a single GPU,
# where the multi-rank plans share that GPU and stage through MPI.
cmd_self=(bash "$here/nccl-self.sh" "$work/e2e-cuda-nccl-self.out"
          bash "$here/run-e2e.sh" "${common[@]}" --work "$work/e2e-cuda-nccl-self"
          single)
if [ $dry = 1 ]; then
  echo "${cmd_adam[*]}"
  echo "${cmd_sgd[*]}"
  echo "${cmd_self[*]}"
  exit 0
fi
failed=""
echo "== CUDA end-to-end, Adam: ${#adam[@]} plans"
"${cmd_adam[@]}" || failed="$failed adam"
echo "== CUDA end-to-end, SGD (lr 1): ${#sgd[@]} plans"
"${cmd_sgd[@]}" || failed="$failed sgd"
echo "== CUDA end-to-end, one rank with NCCL groups of one (TRIDENT_CUDA_NCCL_SELF=1)"
"${cmd_self[@]}" || failed="$failed nccl-self"
if [ -n "$failed" ]; then
  echo "cuda-e2e.sh: FAILED:$failed" >&2
  exit 1
fi
echo "cuda-e2e.sh: every plan matches the CPU runtime's single-rank run"
