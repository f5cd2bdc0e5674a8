#!/usr/bin/env bash
#===- 36-bf16.sh - an emitted program in bf16 mixed precision ------------===#
#
# Shows: `trident emit --precision bf16` turning tiny-llama's tp 2 plan
# (RMSNorm, SwiGLU, RoPE, grouped-query attention; sequence parallel) into
# a bf16 mixed-precision program: bf16 weight copies and activations, fp32
# master weights, gradients and Adam state (docs/emit.md, "bf16 mixed
# precision"). It prints its precision before the first step; 3 Adam
# steps on 2 MPI ranks are then compared, losses only, with the
# single-rank fp32 run (within 2 %) and the single-rank bf16 run (within
# 1.4e-3, the tolerance docs/emit.md derives). Last, what only linear
# layers read is kept in bf16 tensors (`rt::toBf16`, two bytes an element:
# the weights' working copies, the norms' and attention's outputs, the
# MLP's activation, which SwiGLU writes into a bf16 tensor itself): the
# tp 2 program again with every value in an fp32 tensor instead (each
# `rt::toBf16(` made `rt::bf16Copy(`, each result declared
# `rt::DType::BF16` declared fp32) trains to the same bits, and its peak
# tensor memory is printed beside the program's.
#
# Expected output shape: per program "$ trident emit ...", "trident:
# wrote ...", "$ mpirun ...", "precision ...", three "step N loss L time
# T" lines; then two "OK: 3 steps, worst relative difference ..." lines;
# then the fp32-storage variant's run, its comparison at rtol 0 and the
# two programs' "memory: peak tensor bytes" lines.
#
# Usage: bash python-free-examples/36-bf16.sh
#        (needs mpirun; TRIDENT_BIN and TRIDENT_RUNTIME_LIB as in
#        10-emit-and-run.sh)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN, LIB, tmp and the emit/run steps:
source python-free-examples/_emit-build.sh

model=test/e2e/models/tiny-llama.json
# emit notes that the fp32 plan's figures assumed fp32 (expected here):
# that note is dropped, any other message kept.
quiet() { grep -v "assume fp32 training" >&2 || true; }
emit_build test/e2e/plans/tiny-llama-tp2-sp.json "$model" "$tmp/tp2-bf16" \
  --precision bf16 2> >(quiet)
run_ranks 2 tp2-bf16
emit_build test/e2e/plans/tiny-llama-single.json "$model" "$tmp/single-bf16" \
  --precision bf16 2> >(quiet)
run_ranks 1 single-bf16
emit_build test/e2e/plans/tiny-llama-single.json "$model" "$tmp/single"
run_ranks 1 single
echo "\$ trident-compare-params --losses single.log tp2-bf16.log --rtol 2e-2"
"$BIN/trident-compare-params" --losses "$tmp/single.log" "$tmp/tp2-bf16.log" --rtol 2e-2
echo "\$ trident-compare-params --losses single-bf16.log tp2-bf16.log --rtol 1.4e-3"
"$BIN/trident-compare-params" --losses "$tmp/single-bf16.log" "$tmp/tp2-bf16.log" --rtol 1.4e-3

# The same program with every value in an fp32 tensor: the same bits,
# more memory.
echo "\$ sed 's/rt::toBf16(/rt::bf16Copy(/; s/, rt::DType::BF16)/)/' tp2-bf16/main.cpp (every value in an fp32 tensor) -> tp2-f32-storage"
cp -r "$tmp/tp2-bf16" "$tmp/tp2-f32-storage"
rm -rf "$tmp/tp2-f32-storage/build"
# A result declared bf16 (an activation's, which the kernel writes
# rounded) becomes fp32, and the bf16Copy after its kernel rounds it.
sed -i 's/rt::toBf16(/rt::bf16Copy(/; s/, rt::DType::BF16)/)/' \
  "$tmp/tp2-f32-storage/main.cpp"
bf16s() { grep -c 'rt::toBf16(\|rt::DType::BF16' "$tmp/$1/main.cpp" || true; }
echo "bf16 tensors in tp2-bf16/main.cpp: $(bf16s tp2-bf16), in tp2-f32-storage: $(bf16s tp2-f32-storage)"
extra=()
[ -n "$LIB" ] && extra=(-DTRIDENT_RUNTIME_LIBRARY="$LIB")
[ -n "${TRIDENT_PROGRAM_OPT:-}" ] && extra+=(-DTRIDENT_PROGRAM_OPT="$TRIDENT_PROGRAM_OPT")
cmake -S "$tmp/tp2-f32-storage" -B "$tmp/tp2-f32-storage/build" "${extra[@]}" > /dev/null
cmake --build "$tmp/tp2-f32-storage/build" -j 2 > /dev/null
run_ranks 2 tp2-f32-storage > /dev/null
echo "\$ trident-compare-params tp2-f32-storage.dump tp2-bf16.dump --rtol 0 --atol 0"
"$BIN/trident-compare-params" "$tmp/tp2-f32-storage.dump" "$tmp/tp2-bf16.dump" --rtol 0 --atol 0 | tail -1
"$BIN/trident-compare-params" --losses "$tmp/tp2-f32-storage.log" "$tmp/tp2-bf16.log" --rtol 0 | tail -1
peak() { sed -n 's/^memory: peak tensor bytes \([0-9]*\) .*/\1/p' "$tmp/$1.log"; }
bf16=$(peak tp2-bf16) f32=$(peak tp2-f32-storage)
echo "peak tensor bytes (max over ranks): tp2-bf16 $bf16, tp2-f32-storage $f32"
if [ "$bf16" -ge "$f32" ]; then
  echo "error: the bf16 tensors saved no memory" >&2
  exit 1
fi
