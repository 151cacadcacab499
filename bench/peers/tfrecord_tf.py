#!/usr/bin/env python3
"""TensorFlow peer of bench/tfrecord.bench.cpp (run that first: it writes the record files).

usage: /tmp/tfvenv/bin/python bench/peers/tfrecord_tf.py
Prints TFRecordDataset read MB/s on /tmp/tapeflow_bench_tfrecord/records_{100000,1000}.tfrecord
and parse_single_example examples/s (eager loop and inside a tf.data map), for the same
Examples as the C++ benchmark.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

DIR = "/tmp/tapeflow_bench_tfrecord"


def best_of(fn, reps=3):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


for size in (100000, 1000):
    path = f"{DIR}/records_{size}.tfrecord"
    mb = os.path.getsize(path) / 1e6
    ds = tf.data.TFRecordDataset(path)
    t = best_of(lambda: ds.reduce(0, lambda acc, _: acc + 1))
    print(f"TFRecordDataset (graph reduce) records of {size} B: {mb / t:.0f} MB/s")

chapter = tf.train.Example(features=tf.train.Features(feature={
    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"j" * 20000])),
    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
})).SerializeToString()
numeric = tf.train.Example(features=tf.train.Features(feature={
    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5] * 16)),
    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[123456789])),
    "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"sample"])),
    "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2, 3, 4])),
})).SerializeToString()
specs = {
    "chapter": (chapter, {"image": tf.io.FixedLenFeature([], tf.string),
                          "label": tf.io.FixedLenFeature([], tf.int64)}),
    "numeric": (numeric, {"x": tf.io.FixedLenFeature([16], tf.float32),
                          "id": tf.io.FixedLenFeature([], tf.int64),
                          "name": tf.io.FixedLenFeature([], tf.string),
                          "tags": tf.io.VarLenFeature(tf.int64)}),
}
for name, (record, spec) in specs.items():
    n = 2000
    t = best_of(lambda: [tf.io.parse_single_example(record, spec) for _ in range(n)])
    print(f"parse_single_example {name}, eager loop: {n / t:,.0f} examples/s")
    n = 100000
    ds = tf.data.Dataset.from_tensors(record).repeat(n).map(
        lambda r: tf.io.parse_single_example(r, spec))
    t = best_of(lambda: ds.reduce(0, lambda acc, _: acc + 1))
    print(f"parse_single_example {name}, tf.data map (1 thread): {n / t:,.0f} examples/s")
