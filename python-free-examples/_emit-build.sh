#===- _emit-build.sh - shared by the examples that emit and run -----------===#
#
# Not an example: sourced by 10-emit-and-run.sh, 12-context-parallel.sh and
# 13-mixture-of-experts.sh from the repository root. Sets BIN (TRIDENT_BIN,
# default build/bin), LIB (TRIDENT_RUNTIME_LIB: a prebuilt runtime archive
# to link, default none: the project builds lib/Runtime itself) and tmp (a
# scratch directory removed on exit).
#
# emit_build PLAN MODEL DIR: `trident emit` the project of MODEL under PLAN
# into DIR (paths under $tmp printed relative), then configure and build it
# through its own CMakeLists.txt, linking the runtime archive LIB when set.
#===----------------------------------------------------------------------===#
BIN=${TRIDENT_BIN:-build/bin}
LIB=${TRIDENT_RUNTIME_LIB:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none

emit_build() {
  echo "\$ trident emit --plan $1 --model $2 --backend cpu -o $(basename "$3")"
  "$BIN/trident" emit --plan "$1" --model "$2" --backend cpu -o "$3" |
    sed "s|$tmp/||g"
  local extra=()
  [ -n "$LIB" ] && extra=(-DTRIDENT_RUNTIME_LIBRARY="$LIB")
  # A sanitizer build's runtime archive needs the sanitizer at link time.
  if [ -n "${TRIDENT_E2E_SANITIZE:-}" ]; then
    extra+=("-DCMAKE_CXX_FLAGS=$TRIDENT_E2E_SANITIZE"
            "-DCMAKE_EXE_LINKER_FLAGS=$TRIDENT_E2E_SANITIZE")
  fi
  cmake -S "$3" -B "$3/build" "${extra[@]}" > "$3/configure.log"
  cmake --build "$3/build" -j 2 > "$3/build.log"
}

# run_ranks N NAME: 3 Adam steps of $tmp/NAME on N ranks, dumping the
# parameters to $tmp/NAME.dump and the step lines to $tmp/NAME.log.
run_ranks() {
  echo "\$ mpirun -np $1 $2/build/train --steps 3 --dump $2.dump"
  mpirun --oversubscribe --allow-run-as-root -np "$1" "$tmp/$2/build/train" \
    --steps 3 --dump "$tmp/$2.dump" | tee "$tmp/$2.log"
}

# compare_runs REF RUN: trident-compare-params on the losses and the dumps.
compare_runs() {
  echo "\$ trident-compare-params --losses $1.log $2.log --rtol 1e-5"
  "$BIN/trident-compare-params" --losses "$tmp/$1.log" "$tmp/$2.log" --rtol 1e-5
  echo "\$ trident-compare-params $1.dump $2.dump --rtol 1e-5 --atol 1e-5"
  "$BIN/trident-compare-params" "$tmp/$1.dump" "$tmp/$2.dump" --rtol 1e-5 --atol 1e-5
}
