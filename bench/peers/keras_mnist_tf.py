#!/usr/bin/env python3
"""TensorFlow/Keras peer of bench/keras_mnist.bench.cpp: training examples/s of the handbook's
MNIST MLP and CNN, batch 50, one step = forward + sparse crossentropy on softmax
probabilities + GradientTape + Adam, compiled with tf.function, on random in-memory inputs; then model.fit's throughput (one epoch
of 10,000 examples for the MLP, 1,000 for the CNN, batch 50, logits into
SparseCategoricalCrossentropy(from_logits=True)).

  /tmp/tfvenv/bin/python bench/peers/keras_mnist_tf.py [--steps N]

Prints the median examples/s of 5 timed runs of N steps (after warm-up) per model, with TF's
default threading (all cores).
"""
import argparse
import statistics
import time

import tensorflow as tf

BATCH = 50


def mlp():
    return tf.keras.Sequential([
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(100, activation=tf.nn.relu),
        tf.keras.layers.Dense(10),
    ])


def cnn():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 5, padding="same", activation=tf.nn.relu),
        tf.keras.layers.MaxPooling2D(2, 2),
        tf.keras.layers.Conv2D(64, 5, padding="same", activation=tf.nn.relu),
        tf.keras.layers.MaxPooling2D(2, 2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(1024, activation=tf.nn.relu),
        tf.keras.layers.Dense(10),
    ])


def measure(model, steps):
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
    x = tf.random.uniform([BATCH, 28, 28, 1], seed=1)
    y = tf.random.uniform([BATCH], maxval=10, dtype=tf.int32, seed=2)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            probs = tf.nn.softmax(model(x, training=True))
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, probs))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(10):
        train_step(x, y).numpy()
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps):
            loss = train_step(x, y)
        loss.numpy()
        rates.append(steps * BATCH / (time.perf_counter() - start))
    return statistics.median(rates)


def measure_fit(model, examples, runs=5):
    """Examples/s of model.fit, one epoch of `examples` in-memory examples per run."""
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = tf.random.uniform([examples, 28, 28, 1], seed=1)
    y = tf.random.uniform([examples], maxval=10, dtype=tf.int32, seed=2)
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)  # trace, warm up
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
        rates.append(examples / (time.perf_counter() - start))
    return statistics.median(rates)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    print(f"tensorflow {tf.__version__}, keras {tf.keras.__version__ if hasattr(tf.keras, '__version__') else '?'}")
    print(f"mlp examples/s: {measure(mlp(), args.steps * 10):.0f}")
    print(f"cnn examples/s: {measure(cnn(), args.steps):.0f}")
    print(f"mlp fit examples/s: {measure_fit(mlp(), 10000):.0f}")
    print(f"cnn fit examples/s: {measure_fit(cnn(), 1000):.0f}")


if __name__ == "__main__":
    main()
