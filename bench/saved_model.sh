#!/usr/bin/env bash
# Serving latency, tapeflow vs TensorFlow, in one run (bench/saved_model.bench.cpp):
#   bench/saved_model.sh [BUILD_DIR] [PYTHON]
# exports the MNIST MLP and CNN with TensorFlow (bench/peers/saved_model_tf.py --export), times
# TensorFlow's loaded signature, then tapeflow's, then TensorFlow's again (machines are noisy).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/default}"
python="${2:-$build/venv/bin/python}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$python" "$here/peers/saved_model_tf.py" --dir "$dir" --export
TAPEFLOW_BENCH_SAVED_MODEL_DIR="$dir" "$build/bench/bench_saved_model" --benchmark_min_time=1
"$python" "$here/peers/saved_model_tf.py" --dir "$dir"
