#!/usr/bin/env bash
#===- scripts/test.sh - README command 2: set up, build, run every test ---===#
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${TRIDENT_BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)"
