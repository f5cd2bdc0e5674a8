#!/usr/bin/env bash
#===- scripts/run.sh - README command 1: set up, build, run the main job --===#
# With no arguments, plans GPT-3 175B on 128 DGX A100 nodes (the built-in
# default); any arguments are passed to `trident` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh >/dev/null
BIN=${TRIDENT_BUILD_DIR:-build}/bin
if [ $# -eq 0 ]; then
  # GPT-3 175B on 128 DGX A100 nodes, the setting of Narayanan et al. 2021.
  exec "$BIN/trident" plan --model gpt3-175b --cluster dgx-a100-80gb:128 \
    --global-batch 1536 --seq-len 2048
fi
exec "$BIN/trident" "$@"
