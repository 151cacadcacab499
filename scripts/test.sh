#!/usr/bin/env bash
# Usage: scripts/test.sh [--interop]
# Configures preset default (or interop: also Python TensorFlow interop tests, same build tree
# build/default), builds everything including the header self-containment check
# (all_verify_interface_header_sets), then runs CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

preset=default
case "${1:-}" in
  "") ;;
  --interop) preset=interop ;;
  *) echo "usage: $0 [--interop]" >&2; exit 2 ;;
esac
packages=("${TAPEFLOW_PACKAGES[@]}")
[ "$preset" = interop ] && packages+=(python3 python3-venv)
tapeflow_require_packages "${packages[@]}"

cmake --preset "$preset"
cmake --build --preset "$preset"  # targets: all, all_verify_interface_header_sets; -j2
ctest --preset "$preset" --output-on-failure -j2
