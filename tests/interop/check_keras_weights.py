"""Keras weights files both ways between tf::keras and Python (issue 18).

    check_keras_weights.py INTEROP_KERAS_WEIGHTS WORK_DIR

For the handbook's MLP, CNN and LSTM text model (handbook_models.py / handbook_models.hpp):
1. Python writes: Keras 3 `model.save_weights('py.weights.h5')` and `model.save('py.keras')`;
   tf_keras `model.save_weights('tfk_ckpt/w')` (a TensorFlow checkpoint prefix), each with its
   predictions on the shared batch; `interop_keras_weights read` loads them into tf::keras
   models and its predictions must equal Python's (<= 1e-5).
2. C++ writes `cpp.weights.h5` and `cpp_ckpt/w` (tf_keras layout); Keras 3 `load_weights`
   (into a built model, as Keras 3 requires) and tf_keras `load_weights` (into an unbuilt one)
   must predict what C++ predicted (<= 1e-5).
Exit status 0 when all agree, 1 otherwise, 77 (skipped) when TensorFlow, Keras 3 or tf_keras
cannot be imported.
"""
import os
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
try:
    import numpy as np
    import tensorflow as tf  # noqa: F401  (handbook_models uses it)
    import keras as keras3
    import tf_keras
except ImportError as e:  # pragma: no cover
    print("SKIPPED: TensorFlow, Keras 3 or tf_keras not importable:", e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handbook_models import IMAGES, TOKENS, model_classes  # noqa: E402

MODELS = ("mlp", "cnn", "rnn")
TOLERANCE = 1e-5


def batch(name):
    return TOKENS if name == "rnn" else IMAGES


def save_values(path, y):
    np.savetxt(path, np.asarray(y, np.float32).reshape(-1), fmt="%.9g")


def diff(path, want):
    if not os.path.exists(path):
        return None
    got = np.loadtxt(path, dtype=np.float64).reshape(-1)
    want = np.asarray(want, np.float64).reshape(-1)
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)))


exe, work = sys.argv[1], os.path.abspath(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
print("TensorFlow %s, Keras %s, tf_keras %s" % (tf.__version__, keras3.__version__,
                                                 tf_keras.__version__))
k3, tfk = model_classes(keras3, "keras3"), model_classes(tf_keras, "tf_keras")
failures = []
want_keras3, want_tfk = {}, {}
for name in MODELS:
    d = os.path.join(work, name)
    os.makedirs(d)
    m = k3[name]()
    want_keras3[name] = m(batch(name)).numpy()
    m.save_weights(os.path.join(d, "py.weights.h5"))
    m.save(os.path.join(d, "py.keras"))
    t = tfk[name]()
    want_tfk[name] = t(batch(name)).numpy()
    t.save_weights(os.path.join(d, "tfk_ckpt", "w"))

res = subprocess.run([exe, "read", work], capture_output=True, text=True)
if res.returncode != 0:
    print((res.stdout + res.stderr).strip())
for name in MODELS:
    d = os.path.join(work, name)
    for what, file, want in (("Keras 3 .weights.h5", "ours_from_h5.txt", want_keras3[name]),
                             ("Keras 3 .keras", "ours_from_keras.txt", want_keras3[name]),
                             ("tf_keras checkpoint prefix", "ours_from_ckpt.txt", want_tfk[name])):
        dv = diff(os.path.join(d, file), want)
        ok = dv is not None and dv <= TOLERANCE
        print("%-4s Python -> C++  %-27s max |diff| %s  %s" %
              (name, what, "missing" if dv is None else "%.2e" % dv, "ok" if ok else "FAIL"))
        if not ok:
            failures.append("%s: %s into C++" % (name, what))

res = subprocess.run([exe, "write", work], capture_output=True, text=True)
if res.returncode != 0:
    print((res.stdout + res.stderr).strip())
for name in MODELS:
    d = os.path.join(work, name)
    pred = os.path.join(d, "cpp_pred.txt")
    if not os.path.exists(pred):
        failures.append("%s: C++ wrote nothing" % name)
        continue
    want = np.loadtxt(pred).reshape(-1)
    m = k3[name]()
    m(batch(name))  # Keras 3 loads into built models only
    m.load_weights(os.path.join(d, "cpp.weights.h5"))
    t = tfk[name]()  # tf_keras restores into the unbuilt model when it builds
    t.load_weights(os.path.join(d, "cpp_ckpt", "w")).assert_existing_objects_matched()
    for what, got in (("Keras 3 .weights.h5", m(batch(name)).numpy()),
                      ("tf_keras checkpoint prefix", t(batch(name)).numpy())):
        dv = float(np.max(np.abs(np.asarray(got, np.float64).reshape(-1) - want)))
        ok = dv <= TOLERANCE
        print("%-4s C++ -> Python  %-27s max |diff| %.2e  %s" % (name, what, dv,
                                                                 "ok" if ok else "FAIL"))
        if not ok:
            failures.append("%s: %s into Python" % (name, what))

if failures:
    print("FAILED:", "; ".join(failures))
    sys.exit(1)
print("all weights files agree")
