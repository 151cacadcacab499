"""tf.data peer for bench/data_pipeline.bench.cpp: the same four pipelines in TensorFlow.

Run: /tmp/tfvenv/bin/python bench/peers/tf_data.py   (tensorflow-cpu 2.x)
Prints items/s per pipeline (best of 3 epochs after one warm-up epoch). Optional arguments
select pipelines by name prefix, e.g. `tf_data.py Jpeg Mnist`.
"""
import sys
import time

import numpy as np
import tensorflow as tf

# one thread per op, so that num_parallel_calls is the only parallelism (as in the C++ bench)
tf.config.threading.set_intra_op_parallelism_threads(1)


def rate(ds, count_fn, reps=3):
    for _ in ds:  # warm-up (tracing, thread pools)
        pass
    best = 0.0
    for _ in range(reps):
        t0 = time.perf_counter()
        n = 0
        for e in ds:
            n += count_fn(e)
        best = max(best, n / (time.perf_counter() - t0))
    return best


i = np.arange(60000 * 28 * 28, dtype=np.uint64)
images = ((i * 2654435761) % (1 << 32) >> 24).astype(np.uint8).reshape(60000, 28, 28, 1)
labels = (np.arange(60000) % 10).astype(np.int32)


def rot90(x, y):
    return tf.image.rot90(x), y


def wanted(name):
    return len(sys.argv) < 2 or any(name.startswith(a) for a in sys.argv[1:])


mnist = (tf.data.Dataset.from_tensor_slices((images, labels)).map(rot90, num_parallel_calls=2)
         .shuffle(10000).batch(32).prefetch(tf.data.AUTOTUNE))
if wanted("MnistPipeline"):
    print("MnistPipeline: %.0f elements/s" % rate(mnist, lambda e: int(e[0].shape[0])))


m = tf.random.normal((128, 128), seed=1)


def busy(x):
    # ~100 us of single-threaded work (a graph while_loop of scalar ops would measure op
    # dispatch, not computation): a few 128x128 matmuls
    v = m + tf.cast(x, tf.float32)
    for _ in range(4):
        v = tf.matmul(v, m) * 0.01
    return tf.reduce_sum(v)


for n in (1, 2) if wanted("CpuHeavyMap") else ():
    ds = tf.data.Dataset.range(400).map(busy, num_parallel_calls=n)
    print("CpuHeavyMap/%d: %.1f elements/s" % (n, rate(ds, lambda e: 1, reps=1)))


def produce(x):
    time.sleep(0.001)
    return x


def spin(ms):
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


for p in (0, 1) if wanted("PrefetchOverlap") else ():
    base = tf.data.Dataset.range(100).map(lambda x: tf.py_function(produce, [x], tf.int64))
    ds = base.prefetch(tf.data.AUTOTUNE) if p else base
    for _ in ds:
        pass
    t0 = time.perf_counter()
    for _ in ds:
        spin(1)
    print("PrefetchOverlap/%d: %.1f ms per epoch of 100" % (p, (time.perf_counter() - t0) * 1000))

# JPEGs like the C++ bench's: 8 distinct 500x375 images, 64 per epoch
jpegs = []
ii, jj = np.meshgrid(np.arange(375), np.arange(500), indexing="ij")
for k in range(8):
    img = np.stack([128 + 100 * np.sin(0.05 * (ii + k) + 0.03 * jj * (c + 1)) + ((ii * jj * 7 + c) % 17)
                    for c in range(3)], axis=-1).astype(np.uint8)
    jpegs.append(tf.io.encode_jpeg(img, quality=90).numpy())
jpegs = jpegs * 8
for n in (1, 2) if wanted("JpegDecodeResize") else ():
    ds = tf.data.Dataset.from_tensor_slices(jpegs).map(
        lambda b: tf.image.resize(tf.io.decode_jpeg(b), (256, 256)), num_parallel_calls=n)
    print("JpegDecodeResize/%d: %.1f images/s" % (n, rate(ds, lambda e: 1)))
