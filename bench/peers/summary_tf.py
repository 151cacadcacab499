"""Peer for bench/summary.bench.cpp: TensorFlow's eager tf.summary.scalar per call, and
sustained scalar events/s to disk (N calls then writer.close()).

usage: python summary_tf.py [N]
"""
import shutil
import sys
import tempfile
import time

import tensorflow as tf

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
d = tempfile.mkdtemp()
w = tf.summary.create_file_writer(d)
loss = tf.constant(0.5)
with w.as_default():
    for i in range(1000):  # warm up
        tf.summary.scalar("loss", loss, step=i)
    t = time.perf_counter()
    for i in range(n):
        tf.summary.scalar("loss", loss, step=i)
    per_call = (time.perf_counter() - t) / n
w.close()
shutil.rmtree(d)

d = tempfile.mkdtemp()
t = time.perf_counter()
w = tf.summary.create_file_writer(d)
with w.as_default():
    for i in range(n):
        tf.summary.scalar("loss", float(i), step=i)
w.close()
sustained = n / (time.perf_counter() - t)
shutil.rmtree(d)
print("tf %s: tf.summary.scalar %.2f us/call; sustained %.0f events/s (n=%d)"
      % (tf.__version__, per_call * 1e6, sustained, n))
