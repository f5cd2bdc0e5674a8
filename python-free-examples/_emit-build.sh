#===- _emit-build.sh - shared by the examples that emit and run -----------===#
#
# Not an example: sourced by 10-emit-and-run.sh, 12-context-parallel.sh,
# 13-mixture-of-experts.sh, 14-dropout-and-windows.sh,
# 15-zero-memory.sh, 16-bert.sh, 17-vit.sh, 18-vocab-padding.sh, 20-gpt-oss.sh,
# 21-deepseek-mla.sh, 23-overlapped-gradient-sums.sh and 24-dlrm.sh from the
# repository root. Sets BIN (TRIDENT_BIN, default build/bin), LIB (TRIDENT_RUNTIME_LIB: a prebuilt runtime archive
# to link, default none: the project builds lib/Runtime itself) and tmp (a
# scratch directory removed on exit). TRIDENT_PROGRAM_OPT, when set, is
# the project's TRIDENT_PROGRAM_OPT (main.cpp's optimisation flags).
#
# emit_build PLAN MODEL DIR [EMIT OPTION ...]: `trident emit` the project of
# MODEL under PLAN into DIR (paths under $tmp printed relative; further
# arguments go to trident emit, e.g. --optimizer sgd), then configure and
# build it through its own CMakeLists.txt, linking the runtime archive LIB
# when set.
#===----------------------------------------------------------------------===#
BIN=${TRIDENT_BIN:-build/bin}
LIB=${TRIDENT_RUNTIME_LIB:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none

emit_build() {
  local plan="$1" model="$2" dir="$3"
  shift 3
  echo "\$ trident emit --plan $plan --model $model --backend cpu${*:+ $*} -o $(basename "$dir")"
  "$BIN/trident" emit --plan "$plan" --model "$model" --backend cpu "$@" \
    -o "$dir" | sed "s|$tmp/||g"
  local extra=()
  [ -n "$LIB" ] && extra=(-DTRIDENT_RUNTIME_LIBRARY="$LIB")
  # main.cpp's optimisation (the project's default is -O1; the tests ask
  # for -O0, which compiles it in half the time: docs/emit.md, "Building
  # the project").
  [ -n "${TRIDENT_PROGRAM_OPT:-}" ] && extra+=(-DTRIDENT_PROGRAM_OPT="$TRIDENT_PROGRAM_OPT")
  # A sanitizer build's runtime archive needs the sanitizer at link time.
  if [ -n "${TRIDENT_E2E_SANITIZE:-}" ]; then
    extra+=("-DCMAKE_CXX_FLAGS=$TRIDENT_E2E_SANITIZE"
            "-DCMAKE_EXE_LINKER_FLAGS=$TRIDENT_E2E_SANITIZE")
  fi
  cmake -S "$dir" -B "$dir/build" "${extra[@]}" > "$dir/configure.log"
  cmake --build "$dir/build" -j 2 > "$dir/build.log"
}

# run_ranks N NAME: 3 training steps of $tmp/NAME on N ranks, dumping the
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
