#!/usr/bin/env bash
#===- 28-out-of-tree-tool.sh - Trident as a library for another MLIR tool -===#
#
# Shows: `cmake --install` of this build into a fresh prefix, then an
# out-of-tree MLIR tool (test/install: a CMakeLists.txt with
# find_package(Trident) and a 20-line main registering the tgraph and
# texec dialects and Trident's passes) configured and built against that
# prefix alone, and run: it attaches a plan to tiny-gpt with
# trident-apply-plan and lowers it with trident-lower-to-texec, giving the
# same texec program as trident-opt. docs/architecture.md, "A library
# others link". ctest's `install` runs this script.
#
# Expected output shape: "installed N files into PREFIX" (lib/cmake/trident
# among them), "built my-trident-opt against PREFIX (no path of the build
# tree in its build)", the tool's texec.program line, then "same program
# as trident-opt: yes".
#
# Usage: bash python-free-examples/28-out-of-tree-tool.sh [BUILD_DIR]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
# A build directory given relative to where the script was called from.
if [ $# -ge 1 ]; then build="$(cd "$1" && pwd)"; fi
cd "$(dirname "$0")/.."
src="$(pwd)"
build="${build:-$(cd "${TRIDENT_BUILD_DIR:-build}" && pwd)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
echo "installed $(find "$work/prefix" -type f | wc -l) files into PREFIX" \
  "($(cd "$work/prefix" && ls -d lib/cmake/trident))"
cmake -S "$src/test/install" -B "$work/tool" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DTrident_DIR="$work/prefix/lib/cmake/trident" \
  > "$work/configure.log"
cmake --build "$work/tool" > "$work/build.log" || {
  tail -40 "$work/build.log"
  exit 1
}
# Nothing of the build tree is used: the tool compiled against the prefix.
if grep -q -- "$build" "$work/tool/build.ninja"; then
  echo "the tool's build reads the build tree" >&2
  exit 1
fi
echo "built my-trident-opt against PREFIX (no path of the build tree in its build)"

"$build/bin/trident" import --model tiny-gpt -o "$work/tiny.mlir" > /dev/null
pipeline="builtin.module(tgraph.model(trident-apply-plan{plan=$src/test/e2e/plans/dp2-tp2-pp2.json}),trident-lower-to-texec)"
"$work/tool/my-trident-opt" "$work/tiny.mlir" "--pass-pipeline=$pipeline" \
  -o "$work/texec.mlir"
grep -m1 'texec.program' "$work/texec.mlir" | cut -c1-60
"$build/bin/trident-opt" "$work/tiny.mlir" "--pass-pipeline=$pipeline" \
  -o "$work/reference.mlir"
if diff -q "$work/texec.mlir" "$work/reference.mlir" > /dev/null; then
  echo "same program as trident-opt: yes"
else
  echo "same program as trident-opt: no"
  exit 1
fi
