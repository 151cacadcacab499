"""Writes the golden TensorBoard event files in this folder with pip TensorFlow.

Run: python make_golden.py   (TensorFlow 2.21 produced the committed files)
Each summary goes to its own file so tests can compare event payloads one by one.
"""
import glob
import os
import shutil

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, fn):
    d = os.path.join(HERE, "tmp_" + name)
    shutil.rmtree(d, ignore_errors=True)
    w = tf.summary.create_file_writer(d)
    with w.as_default():
        fn()
    w.close()
    (path,) = glob.glob(os.path.join(d, "events.out.tfevents.*"))
    shutil.move(path, os.path.join(HERE, name + ".tfevents"))
    shutil.rmtree(d)


write("scalar", lambda: (tf.summary.scalar("loss", 0.5, step=1),
                         tf.summary.scalar("train/acc", np.float64(0.25), step=7),
                         tf.summary.scalar("neg", -3, step=-2)))

img = np.arange(2 * 3 * 4 * 3, dtype=np.uint8).reshape(2, 3, 4, 3) * 2
fimg = (np.arange(1 * 2 * 2 * 1, dtype=np.float32).reshape(1, 2, 2, 1) / 3.0)
write("image", lambda: (tf.summary.image("sample", img, step=3),
                        tf.summary.image("gray", fimg, step=4, max_outputs=1)))

write("histogram", lambda: (
    tf.summary.histogram("weights", np.array([0.0, 1.0, 1.5, 2.0, 5.0, -1.0]), step=2),
    tf.summary.histogram("five", np.array([1, 2, 3], dtype=np.float32), step=3, buckets=5),
    tf.summary.histogram("same", np.array([4.0, 4.0]), step=4, buckets=3),
    tf.summary.histogram("empty", np.zeros([0], dtype=np.float32), step=5, buckets=2)))

write("text", lambda: (tf.summary.text("note", "hello **world**", step=0),
                       tf.summary.text("grid", [["a", "b"], ["c", "d"]], step=1)))

t = np.linspace(0.0, 1.0, 8, dtype=np.float32)
wave = np.stack([np.sin(2 * np.pi * t), 0.5 * np.cos(2 * np.pi * t)], axis=1)[None]  # [1,8,2]
write("audio", lambda: tf.summary.audio("tone", wave, sample_rate=8000, step=6))

# A graph trace of a small tf.function, as in the chapter.
d = os.path.join(HERE, "tmp_graph")
shutil.rmtree(d, ignore_errors=True)
w = tf.summary.create_file_writer(d)


@tf.function
def f(x, y):
    return tf.nn.relu(tf.matmul(x, y) + 1.0)


tf.summary.trace_on(graph=True, profiler=False)
f(tf.ones([2, 3]), tf.ones([3, 4]))
with w.as_default():
    tf.summary.trace_export("model_trace", step=0)
w.close()
(path,) = glob.glob(os.path.join(d, "events.out.tfevents.*"))
shutil.move(path, os.path.join(HERE, "graph_trace.tfevents"))
shutil.rmtree(d)
print("done")
