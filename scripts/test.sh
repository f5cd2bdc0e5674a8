#!/usr/bin/env bash
#===- scripts/test.sh - README command 2: set up, build, run every test ---===#
#
# 1. the normal build (build/, or TRIDENT_BUILD_DIR) and its whole ctest
#    suite;
# 2. the same suite again in a sanitizer build, <build dir>-asan, compiled
#    with -DTRIDENT_SANITIZE="address;undefined" (AddressSanitizer and
#    UndefinedBehaviorSanitizer on Trident's own code; the benchmarks and
#    the CUDA runtime are left out of it). TRIDENT_SANITIZER_TESTS=0 skips this second pass.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
free_mb() { df -Pm "$1" | awk 'NR == 2 { print $4 }'; }
echo "test.sh: $(free_mb .) MB free on the checkout's disk"
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${TRIDENT_BUILD_DIR:-build}
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$(nproc)")

if [[ ${TRIDENT_SANITIZER_TESTS:-1} == 0 ]]; then
  echo "test.sh: sanitizer pass skipped (TRIDENT_SANITIZER_TESTS=0)"
  exit 0
fi
ASAN_DIR=${BUILD_DIR%/}-asan
# Disk: the normal pass leaves about 1.5 GB of test outputs (the emitted
# and compiled end-to-end programs with their parameter dumps, lit's
# Output folders), which the next ctest run writes afresh: they are
# removed before the sanitizer build, which with its own test outputs
# takes about 1.7 GB more (0.4 GB of it objects, 0.6 GB binaries, 0.6 GB
# test outputs). Where less than TRIDENT_MIN_FREE_MB (default 3072)
# is still free, the normal build's object files go too (its binaries
# stay). The free space is printed either way, so that a run that still
# fails for lack of disk says so (docs/robustness.md, "Disk").
find "$BUILD_DIR/test/e2e" -mindepth 1 -maxdepth 1 -type d ! -name CMakeFiles -exec rm -rf {} +
find "$BUILD_DIR" -type d -name Output -prune -exec rm -rf {} +
FREE_MB=$(free_mb "$BUILD_DIR")
echo "test.sh: ${FREE_MB} MB free on the build's disk after removing the normal pass's test outputs"
if (( FREE_MB < ${TRIDENT_MIN_FREE_MB:-3072} )); then
  echo "test.sh: under ${TRIDENT_MIN_FREE_MB:-3072} MB: removing $BUILD_DIR's object files"
  find "$BUILD_DIR" -name '*.o' -delete
  echo "test.sh: now $(free_mb "$BUILD_DIR") MB free"
fi
if [[ ! -f $ASAN_DIR/build.ninja ]]; then
  # -O1: what the sanitizers' documentation recommends, and quicker to
  # compile than -O3 on CI's two cores.
  # CPU-only runtime: no GPU runs the CUDA backend here, and the normal
  # pass has compiled it and the emitted CUDA project already.
  cmake -S . -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
    "-DTRIDENT_SANITIZE=address;undefined" -DTRIDENT_RUNTIME_CPU_ONLY=ON
fi
cmake --build "$ASAN_DIR" -j "$(nproc)"
# abort_on_error: a sanitizer report ends the process with SIGABRT, not with
#   exit code 1, so that a bad-input case (which expects a non-zero exit) or
#   a `not` RUN line cannot mistake a report for an ordinary error exit.
# detect_leaks=1 (the default, stated): leaks at exit fail the test too,
#   except inside the third-party libraries of scripts/lsan-suppressions.txt
#   (Open MPI keeps its MPI_Init state past exit).
# halt_on_error=1: UBSan stops at the first report (the code is also built
#   with -fno-sanitize-recover=undefined).
# print_stacktrace=1: UBSan reports say where.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons the unused part of
#   its slabs when the code that inlines it is instrumented (ours) but not
#   when it is not (the Debian libMLIR.so); memory that libMLIR hands out
#   from a slab our code poisoned is then reported as use-after-poison
#   (seen in mlir::FileLineColRange::get while parsing). The flag ignores
#   those manual poisonings only; the compiler's own redzones, use after
#   free and overflow checks stay on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_poisoning=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
(cd "$ASAN_DIR" && ctest --output-on-failure -j "$(nproc)")
