#!/usr/bin/env bash
#===- scripts/setup.sh - install every Debian package Trident needs -------===#
#
# Idempotent: when every package is already present it only checks and
# returns (well under a second). Both README commands start here.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  nlohmann-json3-dev libfmt-dev libeigen3-dev catch2
  libopenmpi-dev openmpi-bin
  chromium
  clang-22 libclang-rt-22-dev   # libFuzzer for scripts/fuzz.sh
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
