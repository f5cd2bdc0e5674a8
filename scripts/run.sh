#!/usr/bin/env bash
#===- scripts/run.sh - README command 1: set up, build, run the main job --===#
# With no arguments, runs the main job on a built-in default model; any
# arguments are passed to `trident` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then
  exec build/bin/trident inspect --model gpt3-175b
fi
exec build/bin/trident "$@"
