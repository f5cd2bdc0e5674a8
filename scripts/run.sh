#!/usr/bin/env bash
#===- scripts/run.sh - README command 1: set up, build, run the main job --===#
# With no arguments, runs the main job on a built-in default model; any
# arguments are passed to `trident` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh >/dev/null
BIN=${TRIDENT_BUILD_DIR:-build}/bin
if [ $# -eq 0 ]; then
  exec "$BIN/trident" inspect --model gpt3-175b
fi
exec "$BIN/trident" "$@"
