#!/usr/bin/env python3
"""TensorFlow peer of bench/applications.bench.cpp: keras.applications.MobileNetV2 (224x224x3,
1000 classes, weights=None) inference of batch 1 and 32 and one SGD training step of batch 32,
as a Keras 3 user runs them fast: inference through a tf.function of `model(x, training=False)`,
training through `model.train_on_batch` (compiled with SparseCategoricalCrossentropy, SGD 0.01).

  python bench/peers/applications_tf.py [--calls N]

Prints one line per case: the median milliseconds of 5 timed runs of N calls (2 for training)
after warm-up, with TensorFlow's default threading.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def timed(fn, calls, runs=5):
    fn()
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(weights=None)
    infer = tf.function(lambda x: model(x, training=False))
    rng = np.random.default_rng(1)
    for n in (1, 32):
        x = tf.constant(rng.uniform(-1, 1, (n, 224, 224, 3)).astype(np.float32))
        ms = timed(lambda: infer(x).numpy(), args.calls if n == 1 else max(2, args.calls // 5))
        print("TensorFlow %s MobileNetV2 inference batch %d: %.1f ms/call" % (tf.__version__, n, ms))
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy())
    x = rng.uniform(-1, 1, (32, 224, 224, 3)).astype(np.float32)
    y = (np.arange(32) * 37 % 1000).astype(np.int32)
    ms = timed(lambda: model.train_on_batch(x, y), 2, runs=3)
    print("TensorFlow %s MobileNetV2 training step batch 32: %.1f ms/step" % (tf.__version__, ms))


if __name__ == "__main__":
    main()
