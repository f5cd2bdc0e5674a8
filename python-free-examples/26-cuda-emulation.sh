#!/usr/bin/env bash
#===- 26-cuda-emulation.sh - the CUDA program, run where no GPU is --------===#
#
# Shows: the CUDA backend's own sources (lib/Runtime/Cuda: the host code,
# every kernel of CudaKernels.cu) built by the host compiler against an
# emulation of the CUDA runtime, cuBLAS and NCCL (lib/Runtime/Cuda/Emu,
# the archive libTridentRuntimeCudaEmu.a of the main build), so that a
# CUDA program trains on any machine. The CUDA program of tiny-gpt on
# tp 2 x pp 2 (`trident emit --backend cuda --emit cpp`) is linked against
# it and run on 4 MPI ranks, each on its own emulated GPU
# (TRIDENT_CUDA_EMU_DEVICES=4), so its tensor-parallel sums and its
# pipeline sends go through NCCL's calls (emulated over MPI), on
# communicators split (ncclCommSplit) from one world communicator; the
# emulation's report (TRIDENT_CUDA_EMU_REPORT=1) counts what ran. Its
# losses and final parameters are then held to the CPU runtime's run on
# one rank, as the CUDA end-to-end tests hold a GPU's (losses within 1e-5
# relative, parameters within 1e-5 relative + 5e-5 absolute:
# docs/runtime.md, "CUDA source on the CPU", says why 5e-5 across
# backends).
#
# Expected output shape: "$ trident emit ... --backend cuda ...", the
# compile line, three "step N loss L time T" lines, one "trident cuda
# emulation (rank R): ... kernel launches ..., N NCCL calls on C
# communicators (S split)" line per rank (sorted), the CPU run's three step lines,
# then the compare tool's "OK: 3 steps" and "OK: 68 parameters, 218496
# elements, 0 outside ..." lines.
#
# Usage: bash python-free-examples/26-cuda-emulation.sh
#        (needs mpirun and mpicxx; TRIDENT_BIN, default build/bin, whose
#        ../lib holds libTridentRuntimeCudaEmu.a and libTridentRuntimeCpu.a)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
LIB="$BIN/../lib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun --oversubscribe --allow-run-as-root)

# build PLAN BACKEND ARCHIVE NAME: the plan's program for BACKEND, compiled
# against ARCHIVE (as test/e2e/run-e2e.sh does).
build() {
  echo "\$ trident emit --plan $1 --model tiny-gpt --backend $2 --emit cpp -o $4.cpp"
  "$BIN/trident" emit --plan "$1" --model tiny-gpt --backend "$2" --emit cpp \
    -o "$tmp/$4.cpp" | sed "s|$tmp/||g"
  echo "\$ mpicxx -std=c++20 $4.cpp -Iinclude $(basename "$3") -o $4"
  mpicxx -std=c++20 -O0 "$tmp/$4.cpp" -Iinclude "$3" -o "$tmp/$4"
}

build test/e2e/plans/tp2-pp2.json cuda "$LIB/libTridentRuntimeCudaEmu.a" tp2-pp2
echo "\$ TRIDENT_CUDA_EMU_DEVICES=4 TRIDENT_CUDA_EMU_REPORT=1 mpirun -np 4 tp2-pp2 --steps 3 --dump tp2-pp2.dump"
TRIDENT_CUDA_EMU_DEVICES=4 TRIDENT_CUDA_EMU_REPORT=1 \
  "${mpi[@]}" -np 4 "$tmp/tp2-pp2" --steps 3 --dump "$tmp/tp2-pp2.dump" \
  > "$tmp/tp2-pp2.log" 2> "$tmp/tp2-pp2.err"
cat "$tmp/tp2-pp2.log"
grep '^trident cuda emulation' "$tmp/tp2-pp2.err" | sort

build test/e2e/plans/single.json cpu "$LIB/libTridentRuntimeCpu.a" single
echo "\$ mpirun -np 1 single --steps 3 --dump single.dump"
"${mpi[@]}" -np 1 "$tmp/single" --steps 3 --dump "$tmp/single.dump" | tee "$tmp/single.log"

echo "\$ trident-compare-params --losses single.log tp2-pp2.log --rtol 1e-5"
"$BIN/trident-compare-params" --losses "$tmp/single.log" "$tmp/tp2-pp2.log" --rtol 1e-5
echo "\$ trident-compare-params single.dump tp2-pp2.dump --rtol 1e-5 --atol 5e-5"
"$BIN/trident-compare-params" "$tmp/single.dump" "$tmp/tp2-pp2.dump" --rtol 1e-5 --atol 5e-5
