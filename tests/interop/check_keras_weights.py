"""Keras weights files both ways between tf::keras and Python (issue 18).

    check_keras_weights.py INTEROP_KERAS_WEIGHTS WORK_DIR

For the handbook's MLP, CNN and LSTM text model (handbook_models.py / handbook_models.hpp) and
tf.keras.applications' MobileNetV2, ResNet50 and VGG16 (small inputs, random weights):
1. Python writes: Keras 3 `model.save_weights('py.weights.h5')` and `model.save('py.keras')`;
   tf_keras `model.save_weights('tfk_ckpt/w')` (a TensorFlow checkpoint prefix), each with its
   predictions on the shared batch; `interop_keras_weights read` loads them into tf::keras
   models and its predictions must equal Python's (<= 1e-5).
2. C++ writes `cpp.weights.h5` and `cpp_ckpt/w` (tf_keras layout) (the applications: of the
   weights it read from py.weights.h5, whose batch-norm statistics Python calibrated, see
   calibrate_batch_norm); Keras 3 `load_weights`
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
# The applications as keras_weights.cpp builds them: (constructor arguments, image size, whether
# tf_keras's checkpoint prefix is checked too).
APPS = {
    "mobilenet_v2": ("MobileNetV2", dict(input_shape=(96, 96, 3), alpha=0.35), 96, True),
    "resnet50": ("ResNet50", dict(input_shape=(32, 32, 3), include_top=False, pooling="avg"), 32,
                 False),
    "vgg16": ("VGG16", dict(input_shape=(32, 32, 3), include_top=False, pooling="max"), 32, False),
}
TOLERANCE = 1e-5


def batch(name):
    if name in APPS:
        size = APPS[name][2]
        n = 2 * size * size * 3
        return (0.9 * np.sin(np.arange(n, dtype=np.float64))).astype(np.float32).reshape(
            2, size, size, 3)
    return TOKENS if name == "rnn" else IMAGES


def make(K, name, flavor):
    """A fresh model of the handbook (attribute names as in C++) or of K.applications."""
    if name in APPS:
        cls, kwargs, _, _ = APPS[name]
        return getattr(K.applications, cls)(weights=None, **kwargs)
    return model_classes(K, flavor)[name]()


def calibrate_batch_norm(model, size):
    """Random-init applications compute next to nothing: with moving statistics (0, 1) each
    BatchNormalization passes on the shrinking scale of its convolution, and after 50 layers
    the features vanish (MobileNetV2's softmax is exactly uniform). One training-mode call with
    momentum 0 on 16 random images makes the moving statistics theirs, so every layer's output
    is normalized and the predictions are informative (then momentum is restored). Only
    MobileNetV2 needs it: random-init ResNet50 (32x32, pooled) still gives features of ~0.1,
    and calibrated it becomes ill-conditioned (TensorFlow's own float32 and float64 results
    then differ by 5e-5 of their scale)."""
    x = np.random.default_rng(0).uniform(-1, 1, (16, size, size, 3)).astype(np.float32)
    bns = [l for l in model.layers if "BatchNormalization" in type(l).__name__]
    for l in bns:
        l.momentum = 0.0
    model(x, training=True)
    for l in bns:
        l.momentum = 0.999


def informative(name, want):
    """Fails a check whose expected values are all alike (a comparison that proves nothing)."""
    spread = float(np.std(np.asarray(want, np.float64)))
    if spread < 1e-6:
        failures.append("%s: the expected outputs are constant (std %.2e)" % (name, spread))


def checkpoint_checked(name):
    return name not in APPS or APPS[name][3]


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
failures = []
want_keras3, want_tfk = {}, {}
ALL = MODELS + tuple(APPS)
for name in ALL:
    d = os.path.join(work, name)
    os.makedirs(d)
    m = make(keras3, name, "keras3")
    if name == "mobilenet_v2":
        calibrate_batch_norm(m, APPS[name][2])
    want_keras3[name] = m(batch(name)).numpy()
    informative(name + " (Keras 3)", want_keras3[name])
    m.save_weights(os.path.join(d, "py.weights.h5"))
    m.save(os.path.join(d, "py.keras"))
    if checkpoint_checked(name):
        t = make(tf_keras, name, "tf_keras")
        if name == "mobilenet_v2":
            calibrate_batch_norm(t, APPS[name][2])
        want_tfk[name] = t(batch(name)).numpy()
        informative(name + " (tf_keras)", want_tfk[name])
        t.save_weights(os.path.join(d, "tfk_ckpt", "w"))

res = subprocess.run([exe, "read", work], capture_output=True, text=True)
if res.returncode != 0:
    print((res.stdout + res.stderr).strip())
for name in ALL:
    d = os.path.join(work, name)
    checks = [("Keras 3 .weights.h5", "ours_from_h5.txt", want_keras3[name]),
              ("Keras 3 .keras", "ours_from_keras.txt", want_keras3[name])]
    if checkpoint_checked(name):
        checks.append(("tf_keras checkpoint prefix", "ours_from_ckpt.txt", want_tfk[name]))
    for what, file, want in checks:
        dv = diff(os.path.join(d, file), want)
        ok = dv is not None and dv <= TOLERANCE
        print("%-12s Python -> C++  %-27s max |diff| %s  %s" %
              (name, what, "missing" if dv is None else "%.2e" % dv, "ok" if ok else "FAIL"))
        if not ok:
            failures.append("%s: %s into C++" % (name, what))

res = subprocess.run([exe, "write", work], capture_output=True, text=True)
if res.returncode != 0:
    print((res.stdout + res.stderr).strip())
for name in ALL:
    d = os.path.join(work, name)
    pred = os.path.join(d, "cpp_pred.txt")
    if not os.path.exists(pred):
        failures.append("%s: C++ wrote nothing" % name)
        continue
    want = np.loadtxt(pred).reshape(-1)
    informative(name + " (C++)", want)
    m = make(keras3, name, "keras3")
    m(batch(name))  # Keras 3 loads into built models only
    m.load_weights(os.path.join(d, "cpp.weights.h5"))
    results = [("Keras 3 .weights.h5", m(batch(name)).numpy())]
    if checkpoint_checked(name):
        t = make(tf_keras, name, "tf_keras")  # tf_keras restores into unbuilt models too
        t.load_weights(os.path.join(d, "cpp_ckpt", "w")).assert_existing_objects_matched()
        results.append(("tf_keras checkpoint prefix", t(batch(name)).numpy()))
    for what, got in results:
        dv = float(np.max(np.abs(np.asarray(got, np.float64).reshape(-1) - want)))
        ok = dv <= TOLERANCE
        print("%-12s C++ -> Python  %-27s max |diff| %.2e  %s" % (name, what, dv,
                                                                 "ok" if ok else "FAIL"))
        if not ok:
            failures.append("%s: %s into Python" % (name, what))

if failures:
    print("FAILED:", "; ".join(failures))
    sys.exit(1)
print("all weights files agree")
