"""Writes graph_*.pbtxt: each graph_*.pb GraphDef printed by TensorFlow's tf.io.write_graph(...,
as_text=True), the goldens of tests/unit/summary/graph.test.cpp.

The .pb files are tapeflow's output: what tf::summary::write_graph(fn, dir, name, false) writes
for the test's functions (square_if_positive, dense_relu, large_constant); the test checks that
tapeflow still writes them byte for byte, and that graph_def_text prints what TensorFlow prints
for them. TensorFlow's parser reads every field (an unknown or malformed one fails here).

Run with TensorFlow installed, from this directory: python3 make_graph_text_golden.py
"""
import glob
import os

import tensorflow as tf

for pb in sorted(glob.glob("graph_*.pb")):
    graph_def = tf.compat.v1.GraphDef()
    with open(pb, "rb") as f:
        graph_def.ParseFromString(f.read())
    name = os.path.splitext(pb)[0] + ".pbtxt"
    tf.io.write_graph(graph_def, ".", name, as_text=True)
    print("wrote", name, "-", len(graph_def.node), "nodes")
