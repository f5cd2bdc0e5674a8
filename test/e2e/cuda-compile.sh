#!/usr/bin/env bash
#===- cuda-compile.sh - The emitted CUDA project of GPT-3-shaped layers ----===#
#
# Emits the training program of two GPT-3 175B-shaped layers (hidden 12288,
# 96 heads, vocabulary 51200, sequence 2048; models/gpt3-175b-2layer.json)
# under tp 8 x pp 2 for the CUDA backend, then configures and builds the
# emitted project through its own CMakeLists.txt, linking the
# TridentRuntimeCuda archive of the main build. Compiles only: no GPU needed.
#
# usage: cuda-compile.sh BUILD_DIR     Exit 77 (skip) without /usr/local/cuda.
#===----------------------------------------------------------------------===#
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "cuda-compile: SKIP: /usr/local/cuda/bin/nvcc not found"
  exit 77
fi
lib="$build/lib/libTridentRuntimeCuda.a"
[ -f "$lib" ] || { echo "cuda-compile: $lib is not built" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/trident-cuda.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$build/bin/trident" emit --plan "$here/plans/gpt3-2layer-tp8-pp2.json" \
  --model "$here/models/gpt3-175b-2layer.json" --backend cuda -o "$work/proj"
# A sanitizer build's runtime archive needs the sanitizer at link time too.
san=${TRIDENT_E2E_SANITIZE:-}
cmake -S "$work/proj" -B "$work/proj/build" -DTRIDENT_RUNTIME_LIBRARY="$lib" \
  ${san:+"-DCMAKE_CXX_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=$san"} \
  > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/proj/build" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
ls -l "$work/proj/build/train" | awk '{print "cuda-compile: built train,", $5, "bytes"}'
grep -c 'rt::attentionForward' "$work/proj/main.cpp" |
  awk '{print "cuda-compile: attention calls in main.cpp:", $1}'
# Where no GPU is visible, the program must fail as a user would want: the
# runtime's one-line error naming rank and cause, exit status 1, no
# uncaught exception (the emitted main catches rt::init's). On a GPU
# machine e2e-cuda runs programs instead.
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  if command -v mpirun > /dev/null; then
    set +e
    mpirun -np 1 --allow-run-as-root "$work/proj/build/train" --steps 1 \
      > "$work/run.log" 2>&1
    rc=$?
    set -e
    # Without nvidia-smi a GPU may still be there: then the error is the
    # plan's 16 ranks against 1, still the runtime's one line.
    if [ $rc -eq 0 ] || grep -q 'terminate called\|what()' "$work/run.log" ||
       ! grep -q '^trident-runtime: error (rank 0): ' "$work/run.log"; then
      echo "cuda-compile: without a GPU the program should end with the" \
           "runtime's init error (exit $rc):" >&2
      cat "$work/run.log" >&2
      exit 1
    fi
    echo "cuda-compile: without a GPU: $(grep -m1 '^trident-runtime: error' "$work/run.log")"
  fi
fi
