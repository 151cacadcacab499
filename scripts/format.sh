#!/usr/bin/env bash
# Usage: scripts/format.sh [--check]
# Reformats (or with --check only checks, like the CTest test `format`) all *.hpp/*.cpp under
# include/ tests/ examples/ bench/ with clang-format-16.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tapeflow_require_packages cmake clang-format-16
case "${1:-}" in
  "") cmake -DFIX=ON -P cmake/TapeflowFormat.cmake ;;
  --check) cmake -P cmake/TapeflowFormat.cmake ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
