"""Checkpoints both ways between tapeflow and TensorFlow (issue 7).

usage: check_checkpoint.py <checkpoint_interop binary> <work dir>

1. tapeflow writes DIR/vars (a variable per dtype and rank) and DIR/model (Sequential
   Dense(4, relu), Dense(2) + Adam): tf.train.load_checkpoint must list our keys, shapes,
   dtypes and values exactly, and tf.train.Checkpoint.restore must bind them into Python
   objects of the same structure (assert_consumed for the variables).
2. The model's weights, restored into a Python structure with Keras 2's names and copied into a
   Keras model, give our predictions (max abs difference <= 1e-5).
3. Reverse: a Keras model trained in Python is saved by tf.train.Checkpoint under the same
   names; tapeflow restores it into a fresh, unbuilt model and matches Keras' predictions.
The installed Keras is Keras 3, whose tf.train.Checkpoint keys differ from Keras 2's (FORMATS.md
11.4), so the Python side uses tf.Module objects carrying Keras 2's local names
("layer-0", "layer_with_weights-0", "kernel", "bias") and copies weights to/from the Keras model.
Exit 77 (skipped) when TensorFlow cannot be imported.
"""
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
    import keras
except Exception as e:  # pragma: no cover
    print("skipped: TensorFlow not importable:", e)
    sys.exit(77)

exe, work = sys.argv[1], os.path.abspath(sys.argv[2])
subprocess.run(["rm", "-rf", work], check=True)
os.makedirs(work)
subprocess.run([exe, "write", work], check=True)

X_EVAL = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5], [-0.3, 0.8, 0.1]], np.float32)


def pattern(dtype, shape):
    n = int(np.prod(shape))
    i = np.arange(n)
    if dtype == "string":
        return np.array([("s%d" % k).encode() for k in i], dtype=object).reshape(shape)
    if dtype == "bool":
        return (i % 3 == 0).reshape(shape)
    if dtype == "uint8":
        return (i * 7 % 256).astype(np.uint8).reshape(shape)
    return (i * 0.5 - 3.0).astype(dtype).reshape(shape)


VARS = {"f0": ("float32", []), "f3": ("float32", [2, 3, 4]), "d2": ("float64", [3, 2]),
        "i1": ("int32", [5]), "l4": ("int64", [1, 2, 1, 3]), "u1": ("uint8", [40]),
        "b2": ("bool", [2, 2]), "s1": ("string", [3])}

# --- 1. load_checkpoint lists our keys, shapes, dtypes and values exactly -------------------
failures = []
path = tf.train.latest_checkpoint(os.path.join(work, "vars"))
assert path and path.endswith("ckpt-1"), path
reader = tf.train.load_checkpoint(path)
shapes = reader.get_variable_to_shape_map()
dtypes = reader.get_variable_to_dtype_map()
want_keys = {k + "/.ATTRIBUTES/VARIABLE_VALUE" for k in VARS} | {
    "save_counter/.ATTRIBUTES/VARIABLE_VALUE", "_CHECKPOINTABLE_OBJECT_GRAPH"}
if set(shapes) != want_keys:
    failures.append("keys: %s" % sorted(set(shapes) ^ want_keys))
for name, (dt, shape) in VARS.items():
    key = name + "/.ATTRIBUTES/VARIABLE_VALUE"
    got = reader.get_tensor(key)
    want = pattern(dt, shape)
    if list(shapes[key]) != shape:
        failures.append("%s shape %s != %s" % (key, shapes[key], shape))
    if dtypes[key].name != dt:
        failures.append("%s dtype %s != %s" % (key, dtypes[key].name, dt))
    if dt == "string":
        ok = [bytes(a) for a in np.ravel(got)] == list(np.ravel(want))
    else:
        ok = np.array_equal(np.asarray(got), want)
    if not ok:
        failures.append("%s values %r != %r" % (key, got, want))
if reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE") != 1:
    failures.append("save_counter")

# tf.train.Checkpoint.restore into the same structure consumes every value
mirror = {n: tf.Variable(tf.zeros(s, dtype=tf.as_dtype(d)) if d != "string"
                         else tf.constant([b""] * int(np.prod(s)))) for n, (d, s) in VARS.items()}
status = tf.train.Checkpoint(**mirror).restore(path)
status.assert_consumed()
for name, (dt, shape) in VARS.items():
    got = mirror[name].numpy()
    want = pattern(dt, shape)
    ok = (list(np.ravel(got)) == list(np.ravel(want))) if dt == "string" else np.array_equal(got, want)
    if not ok:
        failures.append("restored %s: %r" % (name, got))
print("step 1 (load_checkpoint + Checkpoint.restore of our variables):",
      "FAILED" if failures else "ok")


# --- 2. our model -> Python structure with Keras 2 names -> Keras model ---------------------
def mirror_model(shapes_in_out):
    m = tf.Module()
    dense = []
    for i, (a, b) in enumerate(shapes_in_out):
        d = tf.Module()
        d.kernel = tf.Variable(tf.zeros([a, b]))
        d.bias = tf.Variable(tf.zeros([b]))
        setattr(m, "layer-%d" % i, d)
        setattr(m, "layer_with_weights-%d" % i, d)
        dense.append(d)
    return m, dense


def keras_model():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                             keras.layers.Dense(2)])


model_path = tf.train.latest_checkpoint(os.path.join(work, "model"))
r = tf.train.load_checkpoint(model_path)
for key in ["model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
            "model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
            "model/layer-1/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
            "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"]:
    if not r.has_tensor(key):
        failures.append("missing key " + key)
if r.has_tensor("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE") and \
        r.get_tensor("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE") != 3:
    failures.append("optimizer/iter != 3")
m, dense = mirror_model([(3, 4), (4, 2)])
tf.train.Checkpoint(model=m).restore(model_path).expect_partial().assert_existing_objects_matched()
km = keras_model()
for layer, d in zip(km.layers, dense):
    layer.kernel.assign(d.kernel)
    layer.bias.assign(d.bias)
pred = km.predict(X_EVAL, verbose=0).ravel()
ours = np.loadtxt(os.path.join(work, "model", "pred.txt"))
diff = float(np.max(np.abs(pred - ours)))
print("step 2 (our trained model in Keras): max abs difference %.3g" % diff)
if not diff <= 1e-5:
    failures.append("forward predictions differ by %g" % diff)

# --- 3. Keras model trained in Python -> tapeflow -------------------------------------------
km = keras_model()
km.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
rng = np.random.default_rng(0)
km.fit(rng.normal(size=(64, 3)).astype(np.float32), rng.normal(size=(64, 2)).astype(np.float32),
       epochs=3, verbose=0)
m, dense = mirror_model([(3, 4), (4, 2)])
for layer, d in zip(km.layers, dense):
    d.kernel.assign(layer.kernel)
    d.bias.assign(layer.bias)
py_dir = os.path.join(work, "py")
tf.train.Checkpoint(model=m).save(os.path.join(py_dir, "ckpt"))
np.savetxt(os.path.join(py_dir, "pred.txt"), km.predict(X_EVAL, verbose=0).ravel(), fmt="%.9g")
res = subprocess.run([exe, "read", work], capture_output=True, text=True)
print("step 3 (Keras-trained model restored by tapeflow):", res.stdout.strip().splitlines()[-1:]
      if res.stdout else "", res.stderr.strip())
if res.returncode != 0:
    failures.append("tapeflow could not restore TensorFlow's checkpoint:\n" + res.stdout + res.stderr)

if failures:
    print("FAILURES:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("checkpoint interop: all checks passed")
