"""Recomputes the cases written by ops_dump with Python TensorFlow and compares.

Usage: check_ops.py <dump.txt>. Exit 0 when every tensor matches (rtol 1e-4, atol 1e-5).
"""
import collections
import sys

import numpy as np
import tensorflow as tf


def load(path):
    cases = collections.defaultdict(dict)
    with open(path) as f:
        for line in f:
            parts = line.split()
            case, name, dtype, rank = parts[0], parts[1], parts[2], int(parts[3])
            dims = [int(d) for d in parts[4:4 + rank]]
            values = np.array([float(v) for v in parts[4 + rank:]], dtype=np.float64)
            cases[case][name] = values.reshape(dims).astype(dtype)
    return cases


def grads(fn, *xs):
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    return tape.gradient(y, xs)


def main():
    c = load(sys.argv[1])
    expected = {}
    m = c["matmul"]
    expected["matmul"] = {"y": tf.matmul(m["a"], m["b"])}
    expected["matmul"]["da"], expected["matmul"]["db"] = grads(
        lambda a, b: tf.reduce_sum(tf.square(tf.matmul(a, b))), m["a"], m["b"])
    v = c["conv2d_same_s2"]
    conv = lambda x, w: tf.nn.conv2d(x, w, strides=2, padding="SAME")
    expected["conv2d_same_s2"] = {"y": conv(v["x"], v["w"])}
    (expected["conv2d_same_s2"]["dx"], expected["conv2d_same_s2"]["dw"]) = grads(
        lambda x, w: tf.reduce_sum(tf.square(conv(x, w))), v["x"], v["w"])
    k = c["conv_block"]
    block = lambda x, w, b: tf.nn.relu(tf.nn.conv2d(x, w, strides=1, padding="SAME") + b)
    pooled = lambda x, w, b: tf.nn.max_pool2d(block(x, w, b), 2, 2, "SAME")
    expected["conv_block"] = {"y": block(k["x"], k["w"], k["b"]),
                              "m": pooled(k["x"], k["w"], k["b"])}
    (expected["conv_block"]["dx"], expected["conv_block"]["dw"],
     expected["conv_block"]["db"]) = grads(
        lambda x, w, b: tf.reduce_sum(tf.square(pooled(x, w, b))), k["x"], k["w"], k["b"])
    p = c["pool"]
    mp = lambda x: tf.nn.max_pool2d(x, 2, 2, "SAME")
    ap = lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME")
    expected["pool"] = {"max": mp(p["x"]), "avg": ap(p["x"])}
    (expected["pool"]["dx"],) = grads(
        lambda x: tf.reduce_sum(tf.square(mp(x))) + tf.reduce_sum(tf.square(ap(x))), p["x"])
    x = c["xent"]
    xent = lambda l: tf.nn.sparse_softmax_cross_entropy_with_logits(x["labels"], l)
    expected["xent"] = {"loss": xent(x["logits"]), "softmax": tf.nn.softmax(x["logits"]),
                        "log_softmax": tf.nn.log_softmax(x["logits"])}
    (expected["xent"]["dlogits"],) = grads(lambda l: tf.reduce_mean(xent(l)), x["logits"])
    e = c["elementwise"]
    f = lambda x, r: (tf.reduce_max(tf.tanh(x) * r + tf.sigmoid(x), 1)
                      - tf.reduce_mean(x, [0, 1]))
    expected["elementwise"] = {"y": f(e["x"], e["row"])}
    expected["elementwise"]["dx"], expected["elementwise"]["drow"] = grads(
        lambda x, r: tf.reduce_sum(tf.exp(f(x, r))), e["x"], e["row"])

    failures = 0
    checked = 0
    for case, tensors in expected.items():
        for name, want in tensors.items():
            got = c[case][name]
            want = np.asarray(want)
            checked += 1
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                failures += 1
                err = np.max(np.abs(got - want)) if got.shape == want.shape else "shape"
                print(f"MISMATCH {case}/{name}: shapes {got.shape} vs {want.shape}, max err {err}")
            else:
                print(f"ok {case}/{name} {got.shape}")
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
