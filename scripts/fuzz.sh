#!/usr/bin/env bash
#===- scripts/fuzz.sh - run every libFuzzer target for a set time ---------===#
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Configures build-fuzz/ (TRIDENT_FUZZ_BUILD_DIR) with Debian's clang-22,
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, builds the
# fuzz targets (fuzz/CMakeLists.txt) and runs each, one after the other on
# one core, for SECONDS_PER_TARGET seconds (default 60), starting from its
# seed corpus fuzz/corpus/<target>/ and its regressions. New interesting
# inputs go to build-fuzz/corpus/<target>/ (not into the tree); a crash,
# timeout (-timeout, default 10 s per input) or out-of-memory input is
# saved as fuzz/crashes/<target>/<kind>-<sha1>. Exits 1 when any target
# found something. Targets: hf-config cluster calibration plan-json
# plan-search cluster-search (all by default). See docs/robustness.md.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] &&
  targets=(hf-config cluster calibration plan-json plan-search cluster-search)
BUILD_DIR=${TRIDENT_FUZZ_BUILD_DIR:-build-fuzz}
CC=${TRIDENT_FUZZ_CC:-clang-22}
CXX=${TRIDENT_FUZZ_CXX:-clang++-22}
command -v "$CXX" >/dev/null || {
  echo "fuzz.sh: $CXX not found (apt-get install clang-22 libclang-rt-22-dev)" >&2
  exit 2
}

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  # fuzzer-no-link: coverage feedback from the libraries under test too.
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
    "-DTRIDENT_SANITIZE=address;undefined" -DTRIDENT_LIBFUZZER=ON
fi
exes=()
for t in "${targets[@]}"; do exes+=("trident-fuzz-$t"); done
cmake --build "$BUILD_DIR" -j "${TRIDENT_FUZZ_JOBS:-$(nproc)}" --target "${exes[@]}"

# Leaks are reported too (no exit-time leak is expected of a reader).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
found=0
for t in "${targets[@]}"; do
  work="$BUILD_DIR/corpus/$t"
  crashes="fuzz/crashes/$t"
  mkdir -p "$work" "$crashes"
  echo "== $t: ${secs}s"
  log="$BUILD_DIR/fuzz-$t.log"
  set +e
  "$BUILD_DIR/bin/trident-fuzz-$t" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$work" "fuzz/corpus/$t" \
    "fuzz/regressions/$t" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
  if ((rc != 0)); then
    found=1
    echo "$t: FOUND something (exit $rc); log $log, inputs under $crashes/"
    grep -m3 -E 'ERROR:|runtime error|SUMMARY' "$log" || tail -5 "$log"
  fi
  rmdir "$crashes" 2>/dev/null || true
done
rmdir fuzz/crashes 2>/dev/null || true
exit $found
