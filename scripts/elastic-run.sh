#!/usr/bin/env bash
#===- scripts/elastic-run.sh - Train on, replanning when ranks die --------===#
#
# Usage: scripts/elastic-run.sh --plan P --model M --steps N
#          --checkpoint-dir DIR [--checkpoint-every K] [--work DIR]
#          [--build-dir BUILD] [--backend cpu|cuda]
#          [--after-failure CLUSTER]... [--inject-kill STEP:RANK]
#
# Runs the emitted program of plan P under mpirun with checkpoints
# (docs/elastic.md). When the run fails (a rank died: mpirun's status is
# not 0), it takes the next --after-failure cluster (the GPUs the job has
# left; given in order, one per failure, as a scheduler would report
# them), replans for it (`trident replan --plan OLD --cluster NEW -o
# NEW.json`), emits and compiles the new plan's program, and resumes it
# from the newest complete checkpoint (--resume), until step N is done.
# A run that fails with no cluster left ends the script with status 1.
#
# Each attempt prints "elastic-run: attempt I: PLAN on R ranks" and its
# program's output; the replans print trident replan's lines.
#
# --inject-kill STEP:RANK (for tests) kills world rank RANK with SIGKILL
# halfway through its file of step STEP's checkpoint, in the first
# attempt only (TRIDENT_RT_CHECKPOINT_KILL of the runtime).
#
# BUILD (default build) holds bin/trident and the runtime archives; the
# programs are compiled with $MPICXX (default mpicxx) and run with
# $MPIRUN (default mpirun).
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
plan="" model="" steps="" ckpt="" every=1 work="" build="$root/build"
backend=cpu kill="" clusters=()
usage() { sed -n '4,7s/^# \{0,1\}//p' "$0"; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "elastic-run: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) need "$@"; plan=$2; shift 2 ;;
    --model) need "$@"; model=$2; shift 2 ;;
    --steps) need "$@"; steps=$2; shift 2 ;;
    --checkpoint-dir) need "$@"; ckpt=$2; shift 2 ;;
    --checkpoint-every) need "$@"; every=$2; shift 2 ;;
    --work) need "$@"; work=$2; shift 2 ;;
    --build-dir) need "$@"; build=$2; shift 2 ;;
    --backend) need "$@"; backend=$2; shift 2 ;;
    --after-failure) need "$@"; clusters+=("$2"); shift 2 ;;
    --inject-kill) need "$@"; kill=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "elastic-run: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$plan" ] && [ -n "$model" ] && [ -n "$steps" ] && [ -n "$ckpt" ] ||
  { echo "elastic-run: --plan, --model, --steps and --checkpoint-dir are required" >&2; usage >&2; exit 2; }
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "elastic-run: --steps must be a positive integer, got '$steps'" >&2; exit 2; }
[[ "$every" =~ ^[1-9][0-9]*$ ]] || { echo "elastic-run: --checkpoint-every must be a positive integer, got '$every'" >&2; exit 2; }
[ -z "$kill" ] || [[ "$kill" =~ ^[0-9]+:[0-9]+$ ]] ||
  { echo "elastic-run: --inject-kill needs STEP:RANK, got '$kill'" >&2; exit 2; }
case "$backend" in
  cpu) lib="$build/lib/libTridentRuntimeCpu.a"; link=() ;;
  cuda) lib="$build/lib/libTridentRuntimeCuda.a"
        read -r -a link <<< "${TRIDENT_CUDA_LDFLAGS:-"-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart -lnccl"}" ;;
  *) echo "elastic-run: --backend must be cpu or cuda, got '$backend'" >&2; exit 2 ;;
esac
trident="$build/bin/trident"
for f in "$trident" "$lib" "$plan"; do
  [ -e "$f" ] || { echo "elastic-run: $f not found" >&2; exit 2; }
done
MPICXX=${MPICXX:-mpicxx}
MPIRUN=${MPIRUN:-mpirun}
[ -n "$work" ] || { work=$(mktemp -d "${TMPDIR:-/tmp}/trident-elastic.XXXXXX"); trap 'rm -rf "$work"' EXIT; }
mkdir -p "$work"
mpi=("$MPIRUN" --oversubscribe)
[ "$(id -u)" != 0 ] || mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# ranks PLAN: dp * cp * tp * pp.
ranks() {
  sed -n 's/^ *"\(dp\|cp\|tp\|pp\)": \([0-9]*\),\{0,1\}$/\2/p' "$1" | head -4 |
    awk 'BEGIN { n = 1 } { n *= $1 } END { print n }'
}

attempt=0
current="$plan"
while :; do
  n=$(ranks "$current")
  echo "elastic-run: attempt $attempt: $current on $n ranks"
  d="$work/attempt-$attempt"
  mkdir -p "$d"
  "$trident" emit --plan "$current" --model "$model" --backend "$backend" \
    --emit cpp -o "$d/main.cpp"
  "$MPICXX" -std=c++20 -O1 "$d/main.cpp" -I"$root/include" "$lib" "${link[@]}" \
    -o "$d/train"
  args=(--steps "$steps" --checkpoint-dir "$ckpt" --checkpoint-every "$every")
  # A checkpoint of an earlier attempt (or of an earlier invocation).
  if compgen -G "$ckpt/step-*/manifest" > /dev/null; then
    args+=(--resume "$ckpt")
  fi
  env=()
  [ "$attempt" != 0 ] || [ -z "$kill" ] || env=(TRIDENT_RT_CHECKPOINT_KILL="$kill")
  if env "${env[@]}" "${mpi[@]}" -np "$n" "$d/train" "${args[@]}"; then
    echo "elastic-run: done: $steps steps (attempt $attempt)"
    exit 0
  fi
  if [ "$attempt" -ge "${#clusters[@]}" ]; then
    echo "elastic-run: attempt $attempt failed and no --after-failure cluster is left" >&2
    exit 1
  fi
  next="${clusters[$attempt]}"
  attempt=$((attempt + 1))
  echo "elastic-run: attempt $((attempt - 1)) failed; replanning for $next"
  "$trident" replan --plan "$current" --cluster "$next" --model "$model" \
    -o "$work/plan-$attempt.json"
  current="$work/plan-$attempt.json"
done
