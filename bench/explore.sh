#!/usr/bin/env bash
#===- bench/explore.sh - trident explore at scale: time and memory -------===#
#
# Runs `trident explore` over a sweep of scenarios and prints how many it
# searched, the wall time and the peak resident memory. The default is
# issue 34's benchmark: Llama-3-70B at sequence 8192 over 1,000 scenarios:
#   DGX H100 and DGX A100 (80 GB) at 1, 2, 4, ..., 512 nodes    (20)
#   x global batches 64, 128, ..., 32768 sequences              (x 10)
#   x the NIC bandwidth as it is and at 100, 200, 400, 800 Gb/s (x 5)
# --small runs 2 x 2 x 2 = 8 scenarios (for the test of this script).
#
# usage: bash bench/explore.sh [--build-dir build] [--threads N] [--small]
#===----------------------------------------------------------------------===#
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/.."
from() { case "$1" in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
build=build threads=0 small=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(from "$2")"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --small) small=1; shift ;;
    *) echo "usage: bash bench/explore.sh [--build-dir DIR] [--threads N]" \
            "[--small]" >&2; exit 2 ;;
  esac
done
if [ "$small" = 1 ]; then
  args=(--model gpt-1.7b --seq-len 2048 --tokens 1e10
        --clusters dgx-h100:1..2,dgx-a100-80gb:1..2 --global-batch 64
        --vary node.nic_bw=200)
else
  args=(--model llama-3-70b --seq-len 8192 --tokens 1e12
        --clusters dgx-h100:1..512,dgx-a100-80gb:1..512
        --global-batch 64,128,256,512,1024,2048,4096,8192,16384,32768
        --vary node.nic_bw=100,200,400,800)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/time -f "%e %M" -o "$out/time" \
  "$build/bin/trident" explore "${args[@]}" --threads "$threads" --json \
  -o "$out/explore.json" > /dev/null || true
read -r seconds kib < "$out/time"
rows=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['rows']))" "$out/explore.json")
echo "explore: ${args[*]}"
echo "scenarios ${rows}"
echo "seconds   ${seconds}"
echo "peak RSS  $((kib / 1024)) MiB"
