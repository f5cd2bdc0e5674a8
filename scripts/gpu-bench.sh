#!/usr/bin/env bash
#===- scripts/gpu-bench.sh - one-GPU step time: measured against predicted -===#
#
# Usage: scripts/gpu-bench.sh [--backend cuda|cpu|cuda-emu] [--build-dir DIR]
#          [--model M] [--gpu NAME] [--seq-len S] [--global-batch B]
#          [--micro-batch N] [--steps N] [--work DIR] [--precision P]
#          [--recompute none|selective] [--fused-attention]
#          [--bundle-out DIR | --bundle-in DIR]
#
# Plans the model for one GPU (dp = tp = pp = 1, the given micro-batch, no
# recomputation) with `trident plan --precision P --runtime trident`
# (P: --precision, fp32 by default, or bf16 for bf16 mixed precision),
# the cost model's description of the programs `trident emit` writes, then
# emits that plan, compiles it against the build's runtime archive, runs
# it on one rank and prints the measured step time (the median of steps 2
# to N: step 1 pays cuBLAS's and the allocator's first calls) and peak
# tensor memory beside the plan's predictions.
#
# --recompute selective plans selective recomputation instead (attention
# keeps its rows' log-sum-exp; docs/emit.md). --fused-attention runs the
# program with its --fused-attention (rt::setFusedAttention: the fused
# attention forward and backward, which selective recomputation's bf16
# attention can take on the CUDA backend); the prediction prices the
# unfused path
# (docs/runtime.md, "Fused attention").
#
# Defaults: the CUDA backend with fp32 GEMMs on TF32 tensor cores (the
# program's --tf32, which the prediction's fp32 precision assumes), the
# ~1 B-parameter GPT of bench/models/gpt-1b.json, 8 sequences of 2048
# tokens per step, micro-batch 1, 6 steps, the GPU named by nvidia-smi and
# the build directory build-gpu (scripts/gpu-check.sh builds it).
#
# --backend cpu runs the same steps on the CPU runtime (build directory
# build). The prediction is still the GPU's (--gpu, default H200): that
# run checks the benchmark's mechanics (docs/runtime.md, "One-GPU
# benchmark"), not the cost model. --backend cuda-emu runs the CUDA
# program, with --tf32, against the emulated CUDA runtime
# (libTridentRuntimeCudaEmu.a of the build directory build; docs/runtime.md,
# "CUDA source on the CPU"): the GPU run's path, cuBLAS's TF32 mode
# included, on the CPU; for a tiny model only (the emulated GEMMs are
# plain loops).
#
# --bundle-out DIR (a machine with the MLIR tools) plans and emits only,
# into DIR (plan.json, plan.txt, params, shape, main.cpp), for --gpu (default
# h200, the lent machine's). --bundle-in DIR (scripts/gpu-device.sh on
# the lent machine, which has no MLIR tools) compiles and runs DIR's
# program against DIR's prediction; $MPICXX, $MPIRUN and
# $TRIDENT_CUDA_LDFLAGS as in test/e2e/run-e2e.sh.
#
# Exit status: 0 when the program ran and every step's loss is finite; the
# ratio is reported, not judged (a benchmark, not a test).
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

backend=cuda build="" model="$root/bench/models/gpt-1b.json" gpu=""
seq=2048 batch=8 mb=1 steps=6 work="" bundleOut="" bundleIn="" precision=fp32
recompute=none fused=0
usage() { sed -n '4,8s/^# \{0,1\}//p' "$0"; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "gpu-bench: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) need "$@"; backend=$2; shift 2 ;;
    --build-dir) need "$@"; build=$2; shift 2 ;;
    --model) need "$@"; model=$2; shift 2 ;;
    --gpu) need "$@"; gpu=$2; shift 2 ;;
    --seq-len) need "$@"; seq=$2; shift 2 ;;
    --global-batch) need "$@"; batch=$2; shift 2 ;;
    --micro-batch) need "$@"; mb=$2; shift 2 ;;
    --steps) need "$@"; steps=$2; shift 2 ;;
    --work) need "$@"; work=$2; shift 2 ;;
    --precision) need "$@"; precision=$2; shift 2 ;;
    --recompute) need "$@"; recompute=$2; shift 2 ;;
    --fused-attention) fused=1; shift ;;
    --bundle-out) need "$@"; bundleOut=$2; shift 2 ;;
    --bundle-in) need "$@"; bundleIn=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-bench: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for pair in seq-len:seq global-batch:batch micro-batch:mb steps:steps; do
  flag=${pair%%:*} v=${pair#*:}
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu-bench: --$flag must be a positive integer, got '${!v}'" >&2; exit 2; }
done
[ "$steps" -ge 2 ] || { echo "gpu-bench: --steps must be at least 2 (step 1 is a warm-up)" >&2; exit 2; }
case "$precision" in
  fp32|bf16) ;;
  *) echo "gpu-bench: --precision must be fp32 or bf16, got '$precision'" >&2; exit 2 ;;
esac
case "$recompute" in
  none|selective) ;;
  *) echo "gpu-bench: --recompute must be none or selective, got '$recompute'" >&2; exit 2 ;;
esac

[ -z "$bundleOut" ] || [ -z "$bundleIn" ] ||
  { echo "gpu-bench: --bundle-out and --bundle-in exclude each other" >&2; exit 2; }
[ -z "$bundleOut" ] || [ -n "$gpu" ] || gpu=h200
MPICXX=${MPICXX:-mpicxx}
MPIRUN=${MPIRUN:-mpirun}
case "$backend" in
  cuda)
    [ -n "$build" ] || build="$root/build-gpu"
    cu=/usr/local/cuda
    # (--bundle-out compiles nothing; given link flags name the CUDA
    # libraries wherever they are.)
    [ -n "$bundleOut" ] || [ -x "$cu/bin/nvcc" ] || [ -n "${TRIDENT_CUDA_LDFLAGS:-}" ] ||
      { echo "gpu-bench: $cu/bin/nvcc not found: no CUDA toolkit" >&2; exit 2; }
    lib="$build/lib/libTridentRuntimeCuda.a"
    read -r -a link <<< "${TRIDENT_CUDA_LDFLAGS:-"-L$cu/lib64 -Wl,-rpath,$cu/lib64 -lcublas -lcudart -lnccl"}"
    runflags=(--tf32)
    if [ -z "$gpu" ] && [ -z "$bundleIn" ]; then
      name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
      [ -n "$name" ] || { echo "gpu-bench: no GPU visible (nvidia-smi); name one with --gpu" >&2; exit 2; }
      # nvidia-smi's names ("NVIDIA H200", "NVIDIA A100-SXM4-80GB") to
      # catalog names or aliases (docs/hardware.md).
      lname=$(echo "$name" | tr '[:upper:]' '[:lower:]')
      case "$lname" in
        *h200*) gpu=h200 ;;
        *h100*) gpu=h100 ;;
        *a100*80*) gpu=a100-80gb ;;
        *a100*) gpu=a100-40gb ;;
        *gb200*) gpu=GB200 ;;
        *b200*) gpu=B200 ;;
        *l40s*) gpu=L40S ;;
        *v100*) gpu=v100 ;;
        *) echo "gpu-bench: GPU '$name' is not in the catalog's names; pass --gpu NAME (docs/hardware.md)" >&2; exit 2 ;;
      esac
    fi ;;
  cpu)
    [ -n "$build" ] || build="$root/build"
    lib="$build/lib/libTridentRuntimeCpu.a"
    link=()
    runflags=()
    [ -n "$gpu" ] || gpu=h200 ;;
  cuda-emu)
    [ -n "$build" ] || build="$root/build"
    lib="$build/lib/libTridentRuntimeCudaEmu.a"
    link=()
    runflags=(--tf32)
    [ -n "$gpu" ] || gpu=h200 ;;
  *) echo "gpu-bench: --backend must be cuda, cpu or cuda-emu, got '$backend'" >&2; exit 2 ;;
esac
trident="$build/bin/trident"
case "$backend" in
  cuda) target=TridentRuntimeCuda ;;
  cpu) target=TridentRuntimeCpu ;;
  cuda-emu) target=TridentRuntimeCudaEmu ;;
esac
# The CUDA program runs on the emulated backend too.
emitBackend=$([ "$backend" = cpu ] && echo cpu || echo cuda)
# --bundle-out needs trident only, --bundle-in the runtime archive only.
needed=("$trident" "$lib")
[ -z "$bundleOut" ] || needed=("$trident")
[ -z "$bundleIn" ] || needed=("$lib")
for f in "${needed[@]}"; do
  [ -e "$f" ] || { echo "gpu-bench: $f is not built (ninja -C $build trident $target; scripts/gpu-check.sh builds both in build-gpu)" >&2; exit 1; }
done
[ -n "$bundleOut" ] || command -v "$MPIRUN" >/dev/null ||
  { echo "gpu-bench: $MPIRUN not found" >&2; exit 1; }

if [ -n "$bundleOut" ]; then
  work=$bundleOut
elif [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/trident-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

if [ -n "$bundleIn" ]; then
  for f in plan.json plan.txt params shape main.cpp; do
    cp "$bundleIn/$f" "$work/$f" || { echo "gpu-bench: $bundleIn/$f missing" >&2; exit 1; }
  done
  # The batch and precision it was planned for.
  read -r batch seq mb precision < "$work/shape"
  precision=${precision:-fp32}
else
  # One GPU: a cluster of one node holding one.
  printf '{"name": "one-gpu", "groups": [{"gpu": "%s", "nodes": 1, "gpus_per_node": 1}]}\n' \
    "$gpu" > "$work/cluster.json"
  "$trident" plan --model "$model" --cluster "$work/cluster.json" \
    --global-batch "$batch" --seq-len "$seq" --precision "$precision" --runtime trident \
    --fix "tp=1,pp=1,dp=1,cp=1,mb=$mb,recompute=$recompute,zero=0" \
    -o "$work/plan.json" > "$work/plan.txt"
  "$trident" inspect --model "$model" --seq-len "$seq" |
    awk '/^parameters/{ gsub(/[()]/, ""); print $3, $4; exit }' > "$work/params"
  echo "$batch $seq $mb $precision" > "$work/shape"
  "$trident" emit --plan "$work/plan.json" --model "$model" --backend "$emitBackend" \
    --emit cpp -o "$work/main.cpp" > "$work/emit.txt"
fi
# The plan's predictions (trident.plan/v1, docs/plan-schema.md).
field() { sed -n "s/^ *\"$1\": \([-0-9.eE+]*\),\{0,1\}$/\1/p" "$work/plan.json" | head -n 1; }
predicted=$(field iteration_time_s)
predictedMem=$(field peak_memory_bytes)
gpuName=$(sed -n 's/^ *"gpu": "\(.*\)",\{0,1\}$/\1/p' "$work/plan.json" | head -n 1)
params=$(cat "$work/params")
name=$(awk '/^model/{print $2; exit}' "$work/plan.txt")
[ -n "$predicted" ] && [ -n "$predictedMem" ] ||
  { echo "gpu-bench: no prediction in $work/plan.json" >&2; exit 1; }
if [ -n "$bundleOut" ]; then
  echo "gpu-bench: planned and emitted $name for one $gpuName into $bundleOut"
  exit 0
fi
# main.cpp is the schedule and calls into the runtime archive, whose
# kernels are compiled optimised already: -O0, as test/e2e/run-e2e.sh
# (gpt-1b's 6087 lines: 16.7 s at -O1 here, and the host only queues
# kernels).
"$MPICXX" -std=c++20 -O0 "$work/main.cpp" -I"$root/include" "$lib" "${link[@]}" \
  -o "$work/train"

mpi=("$MPIRUN" -np 1)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
[ "$fused" = 0 ] || runflags+=(--fused-attention)
"${mpi[@]}" "$work/train" --steps "$steps" "${runflags[@]}" > "$work/run.log"

# step N loss L time T (docs/emit.md); the median of steps 2..N.
awk '/^step /{ if ($4 != $4 + 0 || $4 == "nan" || $4 == "inf" || $4 == "-inf") bad = 1; n++ }
     END { exit (n == 0 || bad) }' "$work/run.log" ||
  { echo "gpu-bench: the run printed no step or a non-finite loss:" >&2; cat "$work/run.log" >&2; exit 1; }
measured=$(awk '/^step / && $2 >= 2 { print $6 }' "$work/run.log" | sort -g |
  awk '{ t[NR] = $1 } END { if (NR % 2) print t[(NR + 1) / 2]; else print (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
measuredMem=$(sed -n 's/^memory: peak tensor bytes \([0-9]*\) .*/\1/p' "$work/run.log")

# What the program says it computes in (its "precision ..." line).
ran=$(sed -n 's/^precision //p' "$work/run.log")
echo "model      $name ($params parameters), $batch x $seq tokens per step, micro-batch $mb, ${ran:-unknown precision}"
planned=$(sed -n 's/^ *"recompute": "\(.*\)",\{0,1\}$/\1/p' "$work/plan.json" | head -n 1)
echo "plan       trident plan --precision $precision --runtime trident on one $gpuName$([ "${planned:-none}" = none ] || echo ", recompute $planned")"
if [ "$fused" = 1 ]; then
  echo "attention  --fused-attention: the fused forward where it applies; the prediction prices the unfused one"
fi
awk '/^step /{ printf "run        step %s loss %s time %.4f s\n", $2, $4, $6 }' "$work/run.log"
# The plan's peak memory counts 1 GB per GPU for the CUDA context, library
# workspaces and allocator slack (EvalOptions::reservedBytes,
# docs/evaluate.md); the program reports the bytes of its tensors.
awk -v p="$predicted" -v m="$measured" -v pm="$predictedMem" -v mm="$measuredMem" \
    -v b="$backend" -v n="$steps" 'BEGIN {
  r = 1e9
  printf "predicted  step %.4f s, peak memory %.3f GB: %.3f GB of tensors + %.0f GB reserved\n", p, pm / 1e9, (pm - r) / 1e9, r / 1e9
  printf "measured   step %.4f s (median of steps 2..%d, backend %s), peak tensor memory %.3f GB\n", m, n, b, mm / 1e9
  printf "ratio      measured / predicted: step %.2f, tensor memory %.2f\n", m / p, mm / (pm - r)
}'
if [ "$backend" != cuda ]; then
  echo "note       the $backend backend ran the program; the prediction is for the GPU: the ratio checks this script, not the cost model"
fi
