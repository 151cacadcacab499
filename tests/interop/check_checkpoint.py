"""Checkpoints both ways between tapeflow and TensorFlow (issue 7).

usage: check_checkpoint.py <checkpoint_interop binary> <work dir>

1. tapeflow writes DIR/vars (a variable per dtype and rank): tf.train.load_checkpoint must list
   our keys, shapes, dtypes and values exactly, and tf.train.Checkpoint.restore must bind them
   into Python variables (assert_consumed).
2. tapeflow trains Sequential Dense(32, relu), Dense(10) with Adam and saves
   Checkpoint(myAwesomeModel=..., myAwesomeOptimizer=...): its keys, shapes and dtypes equal
   those of the same structure saved by Keras 2 (tf_keras); a fresh tf_keras model + Adam
   restores it (assert_existing_objects_matched, then assert_consumed once a step has created
   the slots) and predicts as tapeflow did, before and after one more Adam step (<= 1e-5).
3. Reverse: a tf_keras model + Adam trained in Python is saved the same way; tapeflow restores
   it into a fresh, unbuilt model + Adam (assert_consumed after a step) and predicts as Keras
   does, before and after one more step (<= 1e-5).
Keras 2 comes from the tf-keras package (`import tf_keras as keras`) and the optimizer is its
OptimizerV2 Adam (tf_keras.optimizers.legacy.Adam), the layout tapeflow writes with
Layout::tf_keras_legacy (iter, beta_1, ..., slots m and v); Keras 3 and tf_keras' default
optimizers are checked by check_keras_layouts.py.
Exit 77 (skipped) when TensorFlow or tf_keras cannot be imported.
"""
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
except Exception as e:  # pragma: no cover
    print("skipped: TensorFlow not importable:", e)
    sys.exit(77)
try:
    import tf_keras as keras
except Exception as e:  # pragma: no cover
    print("skipped: tf_keras (Keras 2, pip package tf-keras) not importable:", e)
    sys.exit(77)

keras.utils.set_random_seed(0)  # the Keras initial weights, so runs repeat
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


# --- 2. our trained model + optimizer -> tf_keras ------------------------------------------
# Mirrors checkpoint_interop.cpp: x[i][j] = ((3 i + j) % 7) / 4 - 0.75, y = ((10 i + k) % 5) / 5 - 0.4
X_TRAIN = (np.arange(24) % 7 * 0.25 - 0.75).astype(np.float32).reshape(8, 3)
Y_TRAIN = (np.arange(80) % 5 * 0.2 - 0.4).astype(np.float32).reshape(8, 10)


def keras_model():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(10)])


def keras_optimizer():
    return keras.optimizers.legacy.Adam(0.01)


def train_steps(model, opt, n):
    for _ in range(n):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(X_TRAIN) - Y_TRAIN))
        v = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, v), v))


def predict(model):
    return model(X_EVAL).numpy().ravel()


def compare(what, got, want_file):
    want = np.loadtxt(want_file)
    diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    print("  %s: max abs difference %.3g" % (what, diff))
    if not diff <= 1e-5:
        failures.append("%s differ by %g" % (what, diff))


def signature(path):
    r = tf.train.load_checkpoint(path)
    dt = r.get_variable_to_dtype_map()
    return {k: (tuple(v), dt[k].name) for k, v in r.get_variable_to_shape_map().items()}


# the same structure saved by tf_keras: keys, shapes and dtypes must be the same as ours
km, kopt = keras_model(), keras_optimizer()
train_steps(km, kopt, 3)
ref_path = tf.train.Checkpoint(myAwesomeModel=km, myAwesomeOptimizer=kopt).save(
    os.path.join(work, "py", "ckpt"))
model_path = tf.train.latest_checkpoint(os.path.join(work, "model"))
ours, theirs = signature(model_path), signature(ref_path)
for k in sorted(set(ours) | set(theirs)):
    if ours.get(k) != theirs.get(k):
        failures.append("key %s: tapeflow %s, tf_keras %s" % (k, ours.get(k), theirs.get(k)))
r = tf.train.load_checkpoint(model_path)
if r.get_tensor("myAwesomeOptimizer/iter/.ATTRIBUTES/VARIABLE_VALUE") != 3:
    failures.append("myAwesomeOptimizer/iter != 3")
print("step 2 (tapeflow model + Adam -> tf_keras): %d keys, same as tf_keras': %s" %
      (len(ours), ours == theirs))

fresh, fopt = keras_model(), keras_optimizer()
status = tf.train.Checkpoint(myAwesomeModel=fresh, myAwesomeOptimizer=fopt).restore(model_path)
status.assert_existing_objects_matched()
compare("predictions after restore", predict(fresh), os.path.join(work, "model", "pred.txt"))
train_steps(fresh, fopt, 1)  # creates the slots, which take the restored m and v
status.assert_consumed()
print("  assert_existing_objects_matched, assert_consumed (after a step): ok")
compare("predictions after one more Adam step", predict(fresh),
        os.path.join(work, "model", "pred_step.txt"))

# --- 3. tf_keras model trained in Python -> tapeflow ----------------------------------------
py_dir = os.path.join(work, "py")
np.savetxt(os.path.join(py_dir, "pred.txt"), predict(km), fmt="%.9g")
res = subprocess.run([exe, "read", work], capture_output=True, text=True)
print("step 3 (tf_keras model + Adam -> tapeflow):")
print("  " + "\n  ".join((res.stdout + res.stderr).strip().splitlines()))
if res.returncode != 0:
    failures.append("tapeflow could not restore tf_keras' checkpoint (exit %d)" % res.returncode)
else:
    compare("predictions after restore", predict(km), os.path.join(py_dir, "ours_pred.txt"))
    train_steps(km, kopt, 1)
    compare("predictions after one more Adam step", predict(km),
            os.path.join(py_dir, "ours_pred_step.txt"))

if failures:
    print("FAILURES:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("checkpoint interop: all checks passed")
