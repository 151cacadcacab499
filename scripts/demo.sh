#!/usr/bin/env bash
# Usage: scripts/demo.sh [mnist_end_to_end arguments...]
# Builds the example `mnist_end_to_end` (target example_mnist_end_to_end) in build/default and
# runs it in build/default/demo: MNIST through a tf::data pipeline into a Keras MLP, loss logged
# to TensorBoard (demo/tensorboard), checkpoints kept by a CheckpointManager (demo/save; running
# the demo again resumes from the latest), then the test accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tapeflow_require_packages "${TAPEFLOW_PACKAGES[@]}"

cmake --preset default
cmake --build --preset default --target example_mnist_end_to_end
mkdir -p build/default/demo
cd build/default/demo
exec ../examples/mnist_end_to_end "$@"
