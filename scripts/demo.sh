#!/usr/bin/env bash
# Usage: scripts/demo.sh [demo arguments...]
# Builds the example `demo` (target example_demo) in build/default and runs it from the repo root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tapeflow_require_packages "${TAPEFLOW_PACKAGES[@]}"

cmake --preset default
cmake --build --preset default --target example_demo
exec build/default/examples/demo "$@"
