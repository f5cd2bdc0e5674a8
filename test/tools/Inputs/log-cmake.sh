#!/usr/bin/env bash
# A stand-in for cmake (emit-build-helper.test): appends its arguments,
# one line per call, to $CMAKE_LOG and does nothing else.
echo "cmake $*" >> "$CMAKE_LOG"
