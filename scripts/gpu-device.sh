#!/usr/bin/env bash
#===- scripts/gpu-device.sh - The GPU checks on the lent machine ----------===#
#
# Usage: scripts/gpu-device.sh [--bundle DIR] [--build-dir DIR]
#                              [--skip-e2e] [--skip-bench] [--skip-torch]
#                              [--no-gpu]
#
# scripts/gpu-check.sh's checks for a machine that has a GPU, nvcc and a
# C++ compiler but no MLIR, MPI or Eigen and no package registry: the
# `device` tool's nvidia-h200. scripts/gpu-bundle.sh, run where the full
# build is, puts in DIR (default .gpu-bundle) what this script cannot make
# here; the `run` call carries DIR. Then, in order, each section printing
# the seconds elapsed since the start:
#
#  1. Open MPI and Eigen unpacked from the bundle's Debian packages into
#     BUILD/deps (no root paths: Open MPI relocated with OPAL_PREFIX);
#     NCCL and cuBLAS found beside nvcc, else in Python's nvidia-*
#     packages;
#  2. the CUDA and CPU runtime archives, trident-compare-params, the CUDA
#     smoke test and the runtime's MPI test, compiled straight from the
#     sources (no CMake), every object in parallel;
#  3. the runtime's MPI test on 4 ranks on the CPU runtime (the bundle's
#     MPI works), the CUDA smoke test on 1 rank, again with one-rank NCCL
#     communicators (TRIDENT_CUDA_NCCL_SELF=1: NCCL's collectives on one
#     GPU), then the MPI test on the CUDA runtime (host-staged
#     collectives: the ranks share the GPU; through test/e2e/gpu-gate.sh,
#     which skips it, reported, where the compute mode admits fewer
#     processes);
#  4. the bundle's CUDA end-to-end programs, each held to the CPU runtime's
#     single-rank run of its model compiled and run here
#     (test/e2e/run-e2e.sh --bundle-in), every plan; then its bf16 ones
#     (--precision bf16: losses within 2 % of the fp32 run and 1.4e-3 of
#     the bf16 one);
#  5. the one-GPU benchmarks against the bundle's predictions
#     (scripts/gpu-bench.sh --bundle-in): gpt-1b in fp32 (TF32) and bf16,
#     the Llama-style ~1B in bf16, mixtral-small, gpt-1b in bf16 under
#     selective recomputation with the unfused and the fused attention
#     forward (--fused-attention);
#  6. where Python has PyTorch, the PyTorch reference of gpt-1b and the
#     Llama-style ~1B (bench/torch_reference.py: bf16 autocast, eager,
#     then torch.compile; each under a 240 s limit).
#
# --no-gpu stops after the CPU runtime's MPI test and needs no GPU: how
# the steps up to there were tried on a machine without one (with the
# system's Open MPI hidden, docs/runtime.md).
#
# Exit: 0 everything passed; 1 a check failed (the summary names it); 2 bad
# usage or no bundle/GPU/toolchain (the message says what).
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle="$root/.gpu-bundle" build="$root/build-device" e2e=1 bench=1 gpu=1
torch=1
usage() { sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) [ $# -ge 2 ] || { usage >&2; exit 2; }; bundle=$2; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
    --skip-e2e) e2e=0; shift ;;
    --skip-bench) bench=0; shift ;;
    --skip-torch) torch=0; shift ;;
    --no-gpu) gpu=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-device: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "gpu-device: $*" >&2; exit 2; }
[ -d "$bundle/e2e" ] && [ -d "$bundle/bench" ] ||
  die "no bundle in $bundle: run scripts/gpu-bundle.sh where the full build is, and carry it"
[ -d "$bundle/debs" ] || die "$bundle has no debs/ (made with --no-debs): MPI and Eigen are missing"
bundle=$(cd "$bundle" && pwd)
start=$(date +%s)
elapsed() { echo "gpu-device: $(( $(date +%s) - start )) s elapsed"; }
jobs=$(nproc)
made=$(cat "$bundle/commit" 2>/dev/null || echo unknown)
echo "gpu-device: bundle from commit $made"
# The tree travels without .git to the lent machine; where git knows the
# commit, a bundle of another one is worth a warning.
here=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
[ -z "$here" ] || [ "$here" = "$made" ] ||
  echo "gpu-device: warning: the tree is at $here, the bundle was made at $made (rerun scripts/gpu-bundle.sh)"

#--- 1. Toolchain --------------------------------------------------------===#
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
[ -n "$nvcc" ] || die "nvcc not found"
cu=$(cd "$(dirname "$nvcc")/.." && pwd)
[ "$gpu" = 0 ] || nvidia-smi -L || die "no GPU visible (nvidia-smi -L failed)"
"$nvcc" --version | tail -n 2
command -v g++ > /dev/null || die "g++ not found"

mkdir -p "$build"
build=$(cd "$build" && pwd)
deps="$build/deps"
rm -rf "$deps"
mkdir -p "$deps" "$build/bin" "$build/lib"
for deb in "$bundle"/debs/*.deb; do
  if command -v dpkg-deb > /dev/null; then
    dpkg-deb -x "$deb" "$deps"
  else
    # A .deb is an ar archive holding data.tar.{xz,zst,gz}.
    t=$(mktemp -d)
    (cd "$t" && ar x "$deb" && tar -xf data.tar.* -C "$deps")
    rm -rf "$t"
  fi
done
arch=x86_64-linux-gnu
ompi="$deps/usr/lib/$arch/openmpi"
[ -f "$ompi/include/mpi.h" ] || die "no mpi.h after unpacking the bundle's packages"
# Open MPI and its PMIx read their plugins and help files under these.
export OPAL_PREFIX="$deps/usr"
export PMIX_PREFIX="$deps/usr/lib/$arch/pmix2"
export PMIX_MCA_mca_base_component_path="$deps/usr/lib/$arch/pmix2/lib/pmix"
export PATH="$deps/usr/bin:$PATH"
export LD_LIBRARY_PATH="$ompi/lib:$deps/usr/lib/$arch:${LD_LIBRARY_PATH:-}"
# One node: shared memory only, no single-copy kernel module needed.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN="$deps/usr/bin/orterun"
MPICXX="$build/bin/mpicxx"
cat > "$MPICXX" <<EOF
#!/bin/sh
# g++ with the bundle's Open MPI (C bindings; written by gpu-device.sh).
exec g++ -DOMPI_SKIP_MPICXX -isystem "$ompi/include" "\$@" -L"$ompi/lib" -Wl,-rpath,"$ompi/lib" -lmpi
EOF
chmod +x "$MPICXX"
export MPIRUN MPICXX

# NCCL and cuBLAS: beside nvcc, else Python's nvidia-nccl / nvidia-cublas.
pyNvidia() { # pyNvidia MODULE: that package's folder, or nothing
  # (nvidia.* are namespace packages: no __file__, one __path__ entry.)
  python3 -c "import importlib, os; m = importlib.import_module('nvidia.$1'); f = getattr(m, '__file__', None); print(os.path.dirname(f) if f else list(m.__path__)[0])" 2>/dev/null || true
}
findLib() { # findLib NAME DIR...: the first DIR holding libNAME.so[.N]
  local name=$1 d; shift
  for d in "$@"; do
    [ -n "$d" ] || continue
    ls "$d"/lib"$name".so* > /dev/null 2>&1 && { echo "$d"; return 0; }
  done
  return 0
}
ncclDir=$(pyNvidia nccl)
ncclLib=$(findLib nccl "$cu/lib64" "$cu/lib" /usr/lib/$arch "${ncclDir:+$ncclDir/lib}")
ncclInc=""
for d in "$cu/include" /usr/include "${ncclDir:+$ncclDir/include}"; do
  [ -n "$d" ] && [ -f "$d/nccl.h" ] && { ncclInc=$d; break; }
done
cublasDir=$(pyNvidia cublas)
cublasLib=$(findLib cublas "$cu/lib64" "$cu/lib" "${cublasDir:+$cublasDir/lib}")
[ -n "$ncclLib" ] && [ -n "$ncclInc" ] || die "NCCL not found (nccl.h, libnccl.so) beside nvcc or in Python's nvidia.nccl"
[ -n "$cublasLib" ] || die "cuBLAS not found beside nvcc or in Python's nvidia.cublas"
echo "gpu-device: CUDA $cu, NCCL $ncclInc + $ncclLib, cuBLAS $cublasLib"
# Link by file name where only the versioned library exists (pip wheels).
libFlag() { # libFlag NAME DIR
  if [ -e "$2/lib$1.so" ]; then echo "-l$1"
  else echo "-l:$(cd "$2" && ls lib"$1".so.* | head -n 1)"; fi
}
TRIDENT_CUDA_LDFLAGS="-L$cu/lib64 -Wl,-rpath,$cu/lib64 -L$cublasLib -Wl,-rpath,$cublasLib $(libFlag cublas "$cublasLib") -lcudart -L$ncclLib -Wl,-rpath,$ncclLib $(libFlag nccl "$ncclLib")"
export TRIDENT_CUDA_LDFLAGS

#--- 2. Archives and tools -----------------------------------------------===#
elapsed
echo "== building the runtime archives and tests ($jobs jobs)"
cxx=(g++ -std=c++20 -O3 -DNDEBUG -fPIC -fexceptions -frtti -I"$root" -I"$root/include"
     -DOMPI_SKIP_MPICXX -isystem "$ompi/include")
rt="$root/lib/Runtime"
common=()
for f in "$rt"/Common/*.cpp; do
  [ "$(basename "$f")" = ParamCompare.cpp ] || common+=("$f")
done
objs="$build/obj"
rm -rf "$objs"
mkdir -p "$objs/cpu" "$objs/cuda"
# One line per object: BACKEND SOURCE.
{
  for f in "${common[@]}" "$rt"/Cpu/*.cpp; do echo "cpu $f"; done
  for f in "${common[@]}" "$rt"/Cuda/*.cpp "$rt"/Cuda/*.cu; do echo "cuda $f"; done
} > "$objs/list"
compileOne() { # compileOne BACKEND SOURCE
  local b=$1 f=$2 o
  o="$objs/$b/$(basename "$f").o"
  case "$f" in
    *.cu) "$nvcc" -std=c++17 -O3 -DNDEBUG -I"$root" -I"$root/include" \
            -DOMPI_SKIP_MPICXX -isystem "$ompi/include" -isystem "$ncclInc" \
            --generate-code=arch=compute_90,code=[compute_90,sm_90] \
            -c "$f" -o "$o" ;;
    *) if [ "$b" = cpu ]; then
         "${cxx[@]}" -isystem "$deps/usr/include/eigen3" -c "$f" -o "$o"
       else
         "${cxx[@]}" -isystem "$cu/include" -isystem "$ncclInc" -c "$f" -o "$o"
       fi ;;
  esac
}
# At most $jobs at once; every job's status is collected by its PID at
# the end (wait -n only paces the loop).
fails=0 pids=()
while read -r b f; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  compileOne "$b" "$f" &
  pids+=("$!")
done < "$objs/list"
for p in "${pids[@]}"; do wait "$p" || fails=1; done
[ "$fails" = 0 ] || { echo "gpu-device: FAILED: compiling the runtime" >&2; exit 1; }
rm -f "$build/lib/libTridentRuntimeCpu.a" "$build/lib/libTridentRuntimeCuda.a"
ar rcs "$build/lib/libTridentRuntimeCpu.a" "$objs"/cpu/*.o
ar rcs "$build/lib/libTridentRuntimeCuda.a" "$objs"/cuda/*.o
read -r -a cudaLink <<< "$TRIDENT_CUDA_LDFLAGS"
built() { echo "gpu-device: FAILED: building $1" >&2; exit 1; }
g++ -std=c++20 -O2 -fexceptions -I"$root/include" \
  "$root/tools/trident-compare-params/trident-compare-params.cpp" \
  "$rt/Common/ParamCompare.cpp" -o "$build/bin/trident-compare-params" ||
  built trident-compare-params
"$MPICXX" -std=c++20 -O2 -fexceptions -I"$root/include" \
  "$root/test/unit/Runtime/Cuda/CudaSmoke.cpp" "$build/lib/libTridentRuntimeCuda.a" \
  "${cudaLink[@]}" -o "$build/bin/trident-runtime-cuda-smoke" ||
  built trident-runtime-cuda-smoke
"$MPICXX" -std=c++20 -O2 -fexceptions -I"$root/include" \
  "$root/test/unit/Runtime/Mpi/RuntimeMpiTest.cpp" "$build/lib/libTridentRuntimeCuda.a" \
  "${cudaLink[@]}" -o "$build/bin/trident-runtime-mpi-test-cuda" ||
  built trident-runtime-mpi-test-cuda
"$MPICXX" -std=c++20 -O2 -fexceptions -I"$root/include" \
  "$root/test/unit/Runtime/Mpi/RuntimeMpiTest.cpp" "$build/lib/libTridentRuntimeCpu.a" \
  -o "$build/bin/trident-runtime-mpi-test" || built trident-runtime-mpi-test

failed=""
mpi=("$MPIRUN" --allow-run-as-root --oversubscribe)
#--- 3. MPI and smoke tests ----------------------------------------------===#
elapsed
echo "== the runtime's MPI test on the CPU runtime (4 ranks): the bundle's MPI"
"${mpi[@]}" -np 4 "$build/bin/trident-runtime-mpi-test" || failed="$failed mpi-cpu"
if [ "$gpu" = 0 ]; then
  # The bundle's programs through run-e2e --bundle-in, on the CPU runtime:
  # two references run as plans against themselves.
  elapsed
  echo "== run-e2e --bundle-in on the CPU runtime (single, tiny-llama-single)"
  bash "$root/test/e2e/run-e2e.sh" --backend cpu --build-dir "$build" \
    --work "$build/e2e-cpu" --bundle-in "$bundle/e2e" single tiny-llama-single ||
    failed="$failed e2e-cpu"
  echo "gpu-device: --no-gpu: stopping before the GPU checks"
  [ -z "$failed" ] || { echo "gpu-device: FAILED:$failed" >&2; exit 1; }
  exit 0
fi
# gated RANKS NAME COMMAND...: COMMAND through test/e2e/gpu-gate.sh, which
# reads the GPUs' compute mode (never changing it) and skips, saying why,
# a check of more ranks than an exclusive mode admits (ranks after the
# first would fail to open the GPU); a skip is reported as NAME-skipped.
gated() {
  local ranks=$1 name=$2 rc=0
  shift 2
  bash "$root/test/e2e/gpu-gate.sh" --ranks "$ranks" "$@" || rc=$?
  case $rc in
  0) ;;
  77) failed="$failed $name-skipped" ;;
  *) failed="$failed $name" ;;
  esac
}
elapsed
echo "== CUDA runtime smoke test (1 rank)"
"${mpi[@]}" -np 1 "$build/bin/trident-runtime-cuda-smoke" || failed="$failed smoke"
elapsed
echo "== CUDA runtime smoke test (1 rank, TRIDENT_CUDA_NCCL_SELF=1: NCCL)"
bash "$root/test/e2e/nccl-self.sh" "$build/nccl-self-smoke.out" \
  "${mpi[@]}" -np 1 "$build/bin/trident-runtime-cuda-smoke" ||
  failed="$failed smoke-nccl-self"
elapsed
echo "== CUDA runtime MPI test (4 ranks)"
gated 4 mpi "${mpi[@]}" -np 4 "$build/bin/trident-runtime-mpi-test-cuda"

#--- 4. End-to-end -------------------------------------------------------===#
# run-e2e's table; the plans are the bundle's.
bundlePlans() { ls "$bundle/e2e/$1/cuda"; }
if [ "$e2e" = 1 ]; then
  # (No single-rank run under TRIDENT_CUDA_NCCL_SELF=1: the emitted
  # single-rank program makes no collective, so it issued no NCCL
  # operation; test/e2e/cuda-e2e.sh says more.)
  elapsed
  echo "== CUDA end-to-end tests (ranks share the GPU: host-staged MPI collectives)"
  # shellcheck disable=SC2046 # one plan name per word
  gated 8 e2e bash "$root/test/e2e/run-e2e.sh" --backend cuda \
    --reference-backend cpu --build-dir "$build" --jobs "$jobs" \
    --work "$build/e2e-cuda" --bundle-in "$bundle/e2e" $(bundlePlans adam-1e-3)
  # shellcheck disable=SC2046
  gated 8 e2e-sgd bash "$root/test/e2e/run-e2e.sh" --backend cuda \
    --reference-backend cpu --build-dir "$build" --jobs "$jobs" \
    --work "$build/e2e-cuda-sgd" --optimizer sgd --lr 1 \
    --bundle-in "$bundle/e2e" $(bundlePlans sgd-1)
  if [ -d "$bundle/e2e/adam-1e-3-bf16/cuda" ]; then
    elapsed
    echo "== CUDA end-to-end tests in bf16 mixed precision"
    # Every GEMM on bf16 copies (rt::setBf16Gemms; no product of these
    # tiny models is large enough for the programs' own choice) and the
    # fused attention forward on (rt::setFusedAttention), as ctest's
    # e2e-cuda-emu-bf16 runs them.
    # shellcheck disable=SC2046
    TRIDENT_BF16_GEMMS=all TRIDENT_FUSED_ATTENTION=on \
    gated 8 e2e-bf16 bash "$root/test/e2e/run-e2e.sh" --backend cuda \
      --reference-backend cpu --build-dir "$build" --jobs "$jobs" \
      --work "$build/e2e-cuda-bf16" --precision bf16 \
      --bundle-in "$bundle/e2e" $(bundlePlans adam-1e-3-bf16)
  fi
fi

#--- 5. Benchmarks -------------------------------------------------------===#
if [ "$bench" = 1 ]; then
  # gpt-1b-bf16-selective twice: with the unfused attention forward, then
  # with the fused one (rt::setFusedAttention, not yet measured).
  for b in gpt-1b gpt-1b-bf16 llama-1b-bf16 mixtral-small \
           gpt-1b-bf16-selective gpt-1b-bf16-selective+fused; do
    dir=${b%+fused}
    [ -d "$bundle/bench/$dir" ] || continue
    elapsed
    echo "== one-GPU benchmark ($b)"
    steps=6
    [ "$b" != mixtral-small ] || steps=4
    extra=()
    [ "$b" = "$dir" ] || extra=(--fused-attention)
    bash "$root/scripts/gpu-bench.sh" --backend cuda --build-dir "$build" \
      --steps "$steps" --work "$build/bench-$b" --bundle-in "$bundle/bench/$dir" \
      "${extra[@]}" || failed="$failed bench-$b"
  done
fi
#--- 6. PyTorch reference ------------------------------------------------===#
if [ "$torch" = 1 ] && [ "$gpu" = 1 ]; then
  if python3 -c "import torch" 2> /dev/null; then
    for m in gpt-1b llama-1b; do
      for mode in eager compile; do
        elapsed
        echo "== PyTorch reference ($m, $mode, bf16 autocast)"
        timeout 240 python3 "$root/bench/torch_reference.py" \
          --model "$root/bench/models/$m.json" --mode "$mode" ||
          failed="$failed torch-$m-$mode"
      done
    done
  else
    echo "gpu-device: no PyTorch for python3 here: the reference is not run"
  fi
fi
echo "gpu-device: done in $(( $(date +%s) - start )) s"
if [ -n "$failed" ]; then
  echo "gpu-device: FAILED:$failed" >&2
  exit 1
fi
