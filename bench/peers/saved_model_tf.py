#!/usr/bin/env python3
"""TensorFlow peer of bench/saved_model.bench.cpp: per-call latency of a loaded SavedModel's
serving_default signature, for the handbook's MNIST MLP and CNN, batch 1 and batch 50.

  python bench/peers/saved_model_tf.py --dir DIR [--export] [--calls N]

--export first writes DIR/mlp and DIR/cnn with tf.saved_model.save (Keras 3 Sequential models,
seeded weights; the serving signature takes any batch of 28x28x1 images), which the C++ bench
loads with tf::saved_model::load. Then, as a TensorFlow user serves them:
`tf.saved_model.load(dir).signatures["serving_default"](x=...)` on a tf.constant already in
memory.
Prints one line per case: the median microseconds per call of 5 timed runs of N calls (after
warm-up), with TF's default threading.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def models():
    mlp = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(100, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    cnn = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(32, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, 2),
        keras.layers.Conv2D(64, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, 2),
        keras.layers.Flatten(),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    return {"mlp": mlp, "cnn": cnn}


def export(directory):
    keras.utils.set_random_seed(0)
    for name, model in models().items():
        serve = tf.function(lambda x, m=model: m(x),
                            input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32)])
        tf.saved_model.save(model, os.path.join(directory, name),
                            signatures={"serving_default": serve.get_concrete_function()})


def median_us(fn, calls):
    for _ in range(max(calls // 10, 3)):
        fn()
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--export", action="store_true")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if args.export:
        export(args.dir)
    rng = np.random.default_rng(1)
    for name in ("mlp", "cnn"):
        infer = tf.saved_model.load(os.path.join(args.dir, name)).signatures["serving_default"]
        # Signatures are called by keyword (a positional call fails to bind first, formats the
        # tensor for the error message and retries: milliseconds per call).
        key = next(iter(infer.structured_input_signature[1]))
        for batch in (1, 50):
            x = {key: tf.constant(rng.random((batch, 28, 28, 1), dtype=np.float32))}
            calls = args.calls if name == "mlp" or batch == 1 else max(args.calls // 10, 10)
            us = median_us(lambda: infer(**x), calls)
            print("TensorFlow %s %s batch %d: %.1f us/call" % (tf.__version__, name, batch, us))


if __name__ == "__main__":
    main()
