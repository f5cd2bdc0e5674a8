#!/usr/bin/env bash
#===- bench/emit-build.sh - main.cpp's optimisation level: build and step --===#
#
# Emits one program (default: tiny-gpt under test/e2e/plans/zero1.json, 2
# ranks), then for each optimisation level of main.cpp (the emitted
# CMakeLists.txt's TRIDENT_PROGRAM_OPT; default levels -O1 and -O3) builds
# it against the prebuilt CPU runtime archive and runs STEPS steps:
# prints the seconds the build took and the median step time of steps
# 4..STEPS (the first three warm up). The runtime's kernels are compiled
# once, in the archive, at the build's own level; only main.cpp changes.
#
# usage: bash bench/emit-build.sh [--build-dir build] [--plan FILE]
#                                 [--model M] [--ranks N] [--steps N]
#                                 [LEVEL ...]          (e.g. -O0 -O1 -O3)
# Relative paths are taken from the current directory; the defaults
# (build, the plan) from the repository root.
#===----------------------------------------------------------------------===#
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/.."
# from PATH: PATH as the caller meant it (relative to its directory).
from() { case "$1" in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
build=build plan=test/e2e/plans/zero1.json model=tiny-gpt ranks=2 steps=20
levels=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(from "$2")"; shift 2 ;;
    --plan) plan="$(from "$2")"; shift 2 ;;
    --model) model="$2"  # a zoo name, or a file
             [ ! -e "$(from "$2")" ] || model="$(from "$2")"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    -O*) levels+=("$1"); shift ;;
    *) echo "emit-build: unknown argument '$1' (want --build-dir, --plan," \
            "--model, --ranks, --steps or a level such as -O1)" >&2; exit 2 ;;
  esac
done
[ ${#levels[@]} -gt 0 ] || levels=(-O1 -O3)
[[ "$steps" =~ ^[0-9]+$ ]] && [ "$steps" -ge 5 ] ||
  { echo "emit-build: --steps must be an integer >= 5, got '$steps'" >&2; exit 2; }
lib="$build/lib/libTridentRuntimeCpu.a"
for f in "$build/bin/trident" "$lib"; do
  [ -f "$f" ] || { echo "emit-build: $f is not built (bash scripts/build.sh)" >&2; exit 1; }
done
lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
"$build/bin/trident" emit --plan "$plan" --model "$model" --backend cpu \
  -o "$tmp/project" > /dev/null
printf '%-8s %14s %16s\n' level "build (s)" "median step (s)"
for level in "${levels[@]}"; do
  b="$tmp/build$level"
  cmake -S "$tmp/project" -B "$b" -DTRIDENT_RUNTIME_LIBRARY="$lib" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "-DTRIDENT_PROGRAM_OPT=$level" \
    > "$tmp/configure.log"
  # The level must be main.cpp's last -O (the one the compiler obeys),
  # after the build type's -O3.
  last=$(grep -o ' -O[0-9sgz]*' "$b/compile_commands.json" | tail -n 1 | tr -d ' ')
  [ "$last" = "$level" ] ||
    { echo "emit-build: main.cpp compiles with $last, not $level" >&2; exit 1; }
  start=$(date +%s%N)
  cmake --build "$b" > "$tmp/build.log"
  end=$(date +%s%N)
  median=$(mpirun --oversubscribe --allow-run-as-root -np "$ranks" "$b/train" \
             --steps "$steps" |
           awk '/^step/ && $2 > 3 {print $6}' | sort -g |
           awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
  printf '%-8s %14s %16s\n' "$level" \
    "$(awk -v n=$((end - start)) 'BEGIN {printf "%.1f", n / 1e9}')" "$median"
done
