#!/usr/bin/env bash
# Usage: scripts/test.sh [--interop] [--gcc-only]
#        scripts/test.sh --sanitize | --tsan   (GCC's ASan+UBSan or TSan build of the whole
#                                               suite with the interop tests, presets sanitize /
#                                               tsan; nothing else)
# 1. GCC: configures preset default (or interop: also the Python TensorFlow interop tests, same
#    build tree build/default, and no benches, which no test runs: CI's time budget), builds
#    everything including the header self-containment check (all_verify_interface_header_sets),
#    then runs CTest.
# 2. Clang: preset clang (build/clang, clang++-16, ASan+UBSan) builds the test suite only (no
#    examples, benches or header checks) and runs it under the sanitizers, without the interop
#    tests: memory errors, leaks and undefined behaviour fail the run. --gcc-only skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

preset=default
clang=1
for arg in "$@"; do
  case "$arg" in
    --interop) preset=interop ;;
    --gcc-only) clang=0 ;;
    --sanitize) preset=sanitize; clang=0 ;;
    --tsan) preset=tsan; clang=0 ;;
    *) echo "usage: $0 [--interop] [--gcc-only] | --sanitize | --tsan" >&2; exit 2 ;;
  esac
done
packages=("${TAPEFLOW_PACKAGES[@]}")
[ "$preset" != default ] && packages+=(python3-venv)  # interop, sanitize, tsan: a venv
[ "$clang" = 1 ] && packages+=("${TAPEFLOW_CLANG_PACKAGES[@]}")
tapeflow_require_packages "${packages[@]}"

# Each phase prints its start time, so a CI log shows where the time budget goes.
phase() { echo "== test.sh $(date -u +%H:%M:%S) $*"; }

phase "GCC ($preset): configure and build"
cmake --preset "$preset"
cmake --build --preset "$preset"  # default/interop: all, all_verify_interface_header_sets; -j2
phase "GCC ($preset): tests"
ctest --preset "$preset" --output-on-failure -j2

if [ "$clang" = 1 ]; then
  phase "Clang: configure and build"
  cmake --preset clang
  cmake --build --preset clang  # -j2
  phase "Clang: tests"
  ctest --preset clang --output-on-failure -j2
fi
phase "done"
