"""Peer of bench/checkpoint.bench.cpp: tf.train.Checkpoint write/restore GB/s for 10M and 100M
float32 parameters held as 1M-parameter variables, in /tmp (page cache).
usage: /tmp/tfvenv/bin/python bench/peers/checkpoint_tf.py [repeats]
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
d = "/tmp/tapeflow_bench_checkpoint_tf"
os.makedirs(d, exist_ok=True)
for total in (10_000_000, 100_000_000):
    vs = {"v%d" % i: tf.Variable(tf.fill([1_000_000], float(i))) for i in range(total // 1_000_000)}
    ckpt = tf.train.Checkpoint(**vs)
    prefix = os.path.join(d, "w")
    ckpt.save_counter  # created now, so write() saves it as restore expects
    ckpt.write(prefix)  # warm up (traces the save functions)
    t = []
    for _ in range(repeats):
        s = time.perf_counter()
        ckpt.write(prefix)
        t.append(time.perf_counter() - s)
    w = min(t)
    ckpt.restore(prefix).assert_existing_objects_matched()
    t = []
    for _ in range(repeats):
        s = time.perf_counter()
        ckpt.restore(prefix).assert_existing_objects_matched()
        t.append(time.perf_counter() - s)
    r = min(t)
    gb = total * 4 / 1e9
    print("TF %11d params: write %.3f s (%.2f GB/s), restore %.3f s (%.2f GB/s)"
          % (total, w, gb / w, r, gb / r))
    del vs, ckpt
