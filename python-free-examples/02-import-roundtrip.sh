#!/usr/bin/env bash
#===- 02-import-roundtrip.sh - a model as tgraph MLIR, through trident-opt -===#
#
# Shows: `trident import` writes Llama-3-8B (zoo) as a tgraph module;
# `trident-opt` parses and verifies it and prints it back byte for byte
# (diff is empty); `trident inspect` reads the .mlir and finds the same
# 8,030,261,248 parameters as the zoo model.
#
# Expected output shape:
#   the first lines of the module (tgraph.model @llama_3_8b, inputs, the
#   embedding, tgraph.repeat "layers.0-31" x 32 ...), the op kinds of the
#   module text with their counts, "round trip: identical", and the inspect
#   summary of the .mlir ("parameters    8030261248 (8.03 B)").
#
# Usage: bash python-free-examples/02-import-roundtrip.sh
#        (TRIDENT_BIN=<dir holding trident and trident-opt>)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "\$ trident import --model llama-3-8b -o llama.mlir"
"$BIN/trident" import --model llama-3-8b -o "$TMP/llama.mlir"
head -n 8 "$TMP/llama.mlir"
echo "  ... ($(wc -l < "$TMP/llama.mlir") lines)"

echo
echo "op kinds in the module text, by count (a layer body appears once):"
grep -o 'tgraph\.[a-z_]*' "$TMP/llama.mlir" | sort | uniq -c | sort -rn

echo
echo "\$ trident-opt llama.mlir -o llama2.mlir && diff llama.mlir llama2.mlir"
"$BIN/trident-opt" "$TMP/llama.mlir" -o "$TMP/llama2.mlir"
diff "$TMP/llama.mlir" "$TMP/llama2.mlir"
echo "round trip: identical"

echo
echo "\$ trident inspect --model llama.mlir"
"$BIN/trident" inspect --model "$TMP/llama.mlir"
