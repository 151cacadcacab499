"""Writes the golden TensorFlow checkpoints tests/unit/train/*.test.cpp read.

Run from this directory with the TensorFlow venv:  python make_golden.py
Produces golden/ckpt-1.{index,data-00000-of-00001} and golden/checkpoint (TF 2.x,
tf.train.Checkpoint over tf.Module objects: one variable per dtype and rank, a nested
module, a name that needs escaping, and save_counter), and golden_manager/ (a
tf.train.CheckpointManager with max_to_keep=2 after three saves: ckpt-2, ckpt-3 and a state
file with timestamps).
"""
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "golden")
shutil.rmtree(out, ignore_errors=True)

m = tf.Module()
m.f32 = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1.0)
m.f64 = tf.Variable(np.array([1.25, -2.5], dtype=np.float64))
m.i32 = tf.Variable(np.array([[[1, -2], [3, 4]]], dtype=np.int32))
m.i64 = tf.Variable(np.int64(-1234567890123))
m.u8 = tf.Variable(np.array([0, 7, 255], dtype=np.uint8))
m.b = tf.Variable(np.array([True, False, True]))
m.s = tf.Variable(np.array([b"alpha", b"", b"gamma delta"]))
inner = tf.Module()
inner.w = tf.Variable(np.array([[0.5]], dtype=np.float32))
m.inner = inner
setattr(m, "a.b/c", tf.Variable(np.float32(3.0)))

ckpt = tf.train.Checkpoint(model=m)
path = ckpt.save(os.path.join(out, "ckpt"))
print(path)
for k, s in tf.train.list_variables(path):
    print(k, s)

mgr_dir = os.path.join(here, "golden_manager")
shutil.rmtree(mgr_dir, ignore_errors=True)
v = tf.Variable(np.float32(0.0))
mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), mgr_dir, max_to_keep=2)
for i in range(3):
    v.assign(float(i + 1))
    print(mgr.save())
print(open(os.path.join(mgr_dir, "checkpoint")).read())
