"""SavedModels written by TensorFlow Python, loaded and served by tf::saved_model::load (issue 17).

usage: check_saved_model_load.py <interop_saved_model_load binary> <work dir>

For Keras 3 and tf_keras, builds the handbook's MLP, CNN and LSTM text model (handbook_models.py,
the chapters' subclassed models), runs them on the shared batch and exports each with
tf.saved_model.save (the call traced with an input signature: any batch for the MLP and CNN, the
text model's fixed batch for its zero initial state) as signature serving_default. The binary
loads each in C++, with no model code, and writes its predictions, which must equal TensorFlow's
(<= 1e-5), and the loaded graph to TensorBoard events, which TensorFlow's reader must parse as a
GraphDef of the model's ops; it also checks C++ -> SavedModel -> C++ round trips itself.
Exit 77 (skipped) when TensorFlow, Keras 3 or tf_keras cannot be imported.
"""
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
    import keras
    import tf_keras
except Exception as e:  # pragma: no cover
    print("skipped: TensorFlow / Keras 3 / tf_keras not importable:", e)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handbook_models import BATCH, IMAGES, SEQ_LENGTH, TOKENS, model_classes  # noqa: E402

TOLERANCE = 1e-5
exe, work = sys.argv[1], os.path.abspath(sys.argv[2])
subprocess.run(["rm", "-rf", work], check=True)
os.makedirs(work)

INPUTS = {  # model: (input, serving spec)
    "mlp": (IMAGES, tf.TensorSpec([None, 28, 28, 1], tf.float32)),
    "cnn": (IMAGES, tf.TensorSpec([None, 28, 28, 1], tf.float32)),
    "rnn": (TOKENS, tf.TensorSpec([BATCH, SEQ_LENGTH], tf.int32)),
}
for flavor, K in (("keras3", keras), ("tf_keras", tf_keras)):
    K.utils.set_random_seed(1)
    for name, cls in model_classes(K, flavor).items():
        x, spec = INPUTS[name]
        model = cls()
        pred = model(tf.constant(x)).numpy()
        d = os.path.join(work, "%s_%s" % (flavor, name))
        call = tf.function(model.call, input_signature=[spec])
        tf.saved_model.save(model, os.path.join(d, "saved_model"),
                            signatures={"serving_default": call.get_concrete_function()})
        np.savetxt(os.path.join(d, "input.txt"), x.reshape(-1), fmt="%.9g")
        np.savetxt(os.path.join(d, "pred.txt"), pred.reshape(-1), fmt="%.9g")

result = subprocess.run([exe, work])
failures = [] if result.returncode == 0 else ["interop_saved_model_load exited %d" % result.returncode]
for case in sorted(os.listdir(work)):
    d = os.path.join(work, case)
    if not os.path.exists(os.path.join(d, "pred.txt")):
        continue
    want = np.loadtxt(os.path.join(d, "pred.txt"))
    got_file = os.path.join(d, "got.txt")
    if not os.path.exists(got_file):
        failures.append(case + ": no prediction from C++")
        print("FAIL %s: no prediction from C++" % case)
        continue
    got = np.loadtxt(got_file)
    diff = np.abs(got - want).max() if got.shape == want.shape else float("inf")
    ok = diff <= TOLERANCE
    print("%s %s: C++ serves TensorFlow's export, max diff %.3g" % ("ok  " if ok else "FAIL", case, diff))
    if not ok:
        failures.append(case)
    # The loaded graph, as TensorBoard reads it: a GraphDef of TensorFlow ops.
    ops = set()
    tb = os.path.join(d, "tensorboard")
    for f in (os.listdir(tb) if os.path.isdir(tb) else []):
        for event in tf.compat.v1.train.summary_iterator(os.path.join(tb, f)):
            if event.graph_def:
                graph = tf.compat.v1.GraphDef.FromString(event.graph_def)
                ops |= {n.op for n in graph.node}
    expected = {"mlp": "MatMul", "cnn": "Conv2D", "rnn": "Sigmoid"}[case.split("_")[-1]]
    ok = any(expected in op for op in ops) and "Softmax" in ops  # MatMul: BatchMatMulV2 too
    print("%s %s: TensorBoard graph of the loaded signature has %s (ops: %s)"
          % ("ok  " if ok else "FAIL", case, expected, ", ".join(sorted(ops))))
    if not ok:
        failures.append(case + " (TensorBoard graph)")
if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("all SavedModels written by TensorFlow load in C++ with TensorFlow's predictions")
