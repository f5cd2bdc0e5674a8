#!/usr/bin/env bash
#===- scripts/build.sh - configure and build Trident into build/ ----------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TRIDENT_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
