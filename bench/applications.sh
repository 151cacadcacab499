#!/usr/bin/env bash
# MobileNetV2 inference and training, tapeflow vs TensorFlow, in one run
# (bench/applications.bench.cpp, bench/peers/applications_tf.py):
#   bench/applications.sh [BUILD_DIR] [PYTHON]
# TensorFlow first, then tapeflow, then TensorFlow again (machines are noisy).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/default}"
python="${2:-$build/venv/bin/python}"
"$python" "$here/peers/applications_tf.py"
"$build/bench/bench_applications"
"$python" "$here/peers/applications_tf.py"
