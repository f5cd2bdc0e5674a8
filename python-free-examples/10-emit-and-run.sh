#!/usr/bin/env bash
#===- 10-emit-and-run.sh - a plan becomes a running program ---------------===#
#
# Shows: `trident emit` turning a plan for tiny-gpt (4 layers, hidden 64,
# 4 heads, vocabulary 256, sequence 32, fp32) with tensor parallelism 2 and
# two pipeline stages (1F1B, 4 micro-batches) into a C++ project; the
# project built through its own CMakeLists.txt (which adds the runtime from
# this source tree, or links the prebuilt one named by TRIDENT_RUNTIME_LIB);
# 3 Adam steps on 4 MPI ranks; the same model on 1 rank; and
# trident-compare-params checking that the losses agree within 1e-5
# relative and every final parameter within 1e-5 relative + 1e-5 absolute
# (docs/emit.md says why the absolute floor). docs/emit.md explains each
# step.
#
# Expected output shape: "$ trident emit ...", "trident: wrote ...",
# "$ mpirun -np 4 ...", three "step N loss L time T" lines, the same for
# one rank, then the compare tool's "OK: 3 steps, ..." (losses) and
# "OK: 68 parameters, 218496 elements, 0 outside ..." lines.
#
# Usage: bash python-free-examples/10-emit-and-run.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as described)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
LIB=${TRIDENT_RUNTIME_LIB:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MPI=(mpirun --oversubscribe --allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

emit_build() { # PLAN DIR
  echo "\$ trident emit --plan $1 --model tiny-gpt --backend cpu -o $(basename "$2")"
  "$BIN/trident" emit --plan "$1" --model tiny-gpt --backend cpu -o "$2" |
    sed "s|$tmp/||g"
  local extra=()
  [ -n "$LIB" ] && extra=(-DTRIDENT_RUNTIME_LIBRARY="$LIB")
  # A sanitizer build's runtime archive needs the sanitizer at link time.
  if [ -n "${TRIDENT_E2E_SANITIZE:-}" ]; then
    extra+=("-DCMAKE_CXX_FLAGS=$TRIDENT_E2E_SANITIZE"
            "-DCMAKE_EXE_LINKER_FLAGS=$TRIDENT_E2E_SANITIZE")
  fi
  cmake -S "$2" -B "$2/build" "${extra[@]}" > "$2/configure.log"
  cmake --build "$2/build" -j 2 > "$2/build.log"
}

emit_build test/e2e/plans/tp2-pp2.json "$tmp/tp2-pp2"
echo "\$ mpirun -np 4 tp2-pp2/build/train --steps 3 --dump tp2-pp2.dump"
"${MPI[@]}" -np 4 "$tmp/tp2-pp2/build/train" --steps 3 --dump "$tmp/tp2-pp2.dump" |
  tee "$tmp/tp2-pp2.log"

emit_build test/e2e/plans/single.json "$tmp/single"
echo "\$ mpirun -np 1 single/build/train --steps 3 --dump single.dump"
"${MPI[@]}" -np 1 "$tmp/single/build/train" --steps 3 --dump "$tmp/single.dump" |
  tee "$tmp/single.log"

echo "\$ trident-compare-params --losses single.log tp2-pp2.log --rtol 1e-5"
"$BIN/trident-compare-params" --losses "$tmp/single.log" "$tmp/tp2-pp2.log" --rtol 1e-5
echo "\$ trident-compare-params single.dump tp2-pp2.dump --rtol 1e-5 --atol 1e-5"
"$BIN/trident-compare-params" "$tmp/single.dump" "$tmp/tp2-pp2.dump" --rtol 1e-5 --atol 1e-5
