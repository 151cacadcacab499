"""SavedModels written by tf::saved_model::save, served by TensorFlow (issue 17, export).

usage: check_saved_model_export.py <interop_saved_model_export binary> <work dir>

The binary trains the handbook's MLP, CNN and LSTM text model in C++, exports each with
tf::saved_model::save (object graph, variables and graph all written by tapeflow) and writes
its inputs and predictions. For each model:
1. tf.saved_model.load(dir).signatures['serving_default'] gives our predictions (<= 1e-5),
   called by keyword and by position;
2. `saved_model_cli show --dir D --all` lists the serving_default signature with its input and
   output, and `saved_model_cli run` (the TF1 session loader, with our saver) writes the same
   predictions;
3. Keras 3's keras.layers.TFSMLayer(dir, call_endpoint='serving_default') serves it inside a
   functional Keras model, tracking the model's weights.
Exit 77 (skipped) when TensorFlow or Keras 3 cannot be imported.
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
    print("skipped: TensorFlow / Keras 3 not importable:", e)
    sys.exit(77)

exe, work = sys.argv[1], os.path.abspath(sys.argv[2])
subprocess.run(["rm", "-rf", work], check=True)
os.makedirs(work)
subprocess.run([exe, work], check=True)
cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")

MODELS = {  # name: (input shape, input dtype, number of weights)
    "mlp": ((4, 28, 28, 1), np.float32, 4),
    "cnn": ((4, 28, 28, 1), np.float32, 8),
    "rnn": ((4, 8), np.int32, 5),
}
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


for name, (shape, dtype, num_weights) in MODELS.items():
    d = os.path.join(work, name)
    model_dir = os.path.join(d, "saved_model")
    x = np.loadtxt(os.path.join(d, "input.txt")).astype(dtype).reshape(shape)
    want = np.loadtxt(os.path.join(d, "pred.txt"), dtype=np.float32).reshape(shape[0], -1)

    loaded = tf.saved_model.load(model_dir)
    serve = loaded.signatures["serving_default"]
    got = serve(inputs=tf.constant(x))["output_0"].numpy()
    check(np.abs(got - want).max() <= 1e-5,
          f"{name}: tf.saved_model.load serving_default (keyword), max diff {np.abs(got - want).max():.3g}")
    got = serve(tf.constant(x))["output_0"].numpy()
    check(np.abs(got - want).max() <= 1e-5, f"{name}: serving_default called by position")

    show = subprocess.run([cli, "show", "--dir", model_dir, "--all"], capture_output=True, text=True)
    check(show.returncode == 0 and "signature_def['serving_default']" in show.stdout
          and "inputs['inputs']" in show.stdout and "outputs['output_0']" in show.stdout,
          f"{name}: saved_model_cli show --all lists serving_default")
    np.save(os.path.join(d, "x.npy"), x)
    out_dir = os.path.join(d, "cli_out")
    run = subprocess.run([cli, "run", "--dir", model_dir, "--tag_set", "serve", "--signature_def",
                          "serving_default", "--inputs", "inputs=" + os.path.join(d, "x.npy"),
                          "--outdir", out_dir], capture_output=True, text=True)
    ok = run.returncode == 0 and os.path.exists(os.path.join(out_dir, "output_0.npy"))
    if not ok:
        print(run.stdout[-2000:], run.stderr[-2000:])
    check(ok and np.abs(np.load(os.path.join(out_dir, "output_0.npy")) - want).max() <= 1e-5,
          f"{name}: saved_model_cli run prints our predictions")

    layer = keras.layers.TFSMLayer(model_dir, call_endpoint="serving_default")
    inp = keras.Input(shape[1:], dtype=dtype, batch_size=shape[0] if name == "rnn" else None)
    out = layer(inp)
    out = out["output_0"] if isinstance(out, dict) else out
    wrapped = keras.Model(inp, out)
    got = np.asarray(wrapped(x))
    check(np.abs(got - want).max() <= 1e-5 and len(layer.weights) == num_weights,
          f"{name}: Keras 3 TFSMLayer serves it ({len(layer.weights)} weights)")

print("FAILED:" if failures else "all checks passed", *failures, sep="\n  ")
sys.exit(1 if failures else 0)
