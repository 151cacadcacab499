"""TensorBoard reads what tapeflow's tf::summary writes.

usage: check_summary.py <summary_write binary> <scratch dir>
1. TensorBoard's own event reader (plugin_event_accumulator, the Python loader) loads the
   scalars, images, histograms, text, audio, the run graph and the trace graph.
2. With TensorFlow importable, the profile (.xplane.pb) opens in the profiler's trace-viewer
   conversion, the one TensorBoard's Profile plugin runs.
3. A real `tensorboard --logdir` server on localhost (Rust "fast" loader and Python loader)
   returns our scalars and the trace graph from its HTTP data API.
Exits 77 (skipped) when the `tensorboard` package does not import.
"""
import glob
import io
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import wave

try:
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.compat.proto import config_pb2, graph_pb2
    from tensorboard.util import tensor_util
except ImportError as e:  # pragma: no cover
    print("SKIPPED: tensorboard does not import:", e)
    sys.exit(77)

binary, scratch = sys.argv[1], sys.argv[2]
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
subprocess.run([binary, scratch], check=True)
run = os.path.join(scratch, "train")


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


# 1. TensorBoard's Python event reader.
acc = pea.EventAccumulator(run, size_guidance={"tensors": 0, "graph": 0})
acc.Reload()
tags = acc.Tags()
plugins = {t: acc.SummaryMetadata(t).plugin_data.plugin_name for t in tags["tensors"]}
check(plugins.get("loss") == "scalars", "scalar tag with the scalars plugin")
loss = acc.Tensors("loss")
check([e.step for e in loss] == list(range(10)), "scalar steps 0..9")
vals = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in loss]
check(all(abs(v - 1.0 / (i + 1)) < 1e-6 for i, v in enumerate(vals)), "scalar values")
check(all(e.tensor_proto.dtype == 1 and e.tensor_proto.tensor_shape.dim == [] for e in loss),
      "scalars are rank-0 float32")

check(plugins.get("sample") == "images", "image plugin")
img = tensor_util.make_ndarray(acc.Tensors("sample")[0].tensor_proto)
check(list(img[:2]) == [b"5", b"4"] and len(img) == 4, "image width, height, 2 images")
check(all(b[:8] == b"\x89PNG\r\n\x1a\n" for b in img[2:]), "PNG blobs")
try:
    import tensorflow as tf

    px = tf.io.decode_png(img[2]).numpy()
    check(px.shape == (4, 5, 3) and int(px[0, 0, 1]) == 3 and int(px[3, 4, 2]) == (59 * 3) % 256,
          "PNG decodes to our pixels")
except ImportError:
    tf = None

check(plugins.get("weights") == "histograms", "histogram plugin")
h = tensor_util.make_ndarray(acc.Tensors("weights")[0].tensor_proto)
check(h.shape == (30, 3) and h[:, 2].sum() == 100 and h[0, 0] == 0 and h[-1, 1] == 99,
      "histogram [30,3] buckets over 0..99")

check(plugins.get("note") == "text", "text plugin")
t = tensor_util.make_ndarray(acc.Tensors("note")[0].tensor_proto)
check(t.item() == b"hello **tensorboard**", "text value")

check(plugins.get("tone") == "audio", "audio plugin")
a = tensor_util.make_ndarray(acc.Tensors("tone")[0].tensor_proto)
with wave.open(io.BytesIO(a.reshape(-1)[0])) as w:
    check((w.getnchannels(), w.getframerate(), w.getsampwidth(), w.getnframes()) == (1, 8000, 2, 100),
          "WAV header (mono, 8000 Hz, 16-bit, 100 frames)")

check(tags["graph"], "run graph present")
g = acc.Graph()
ops = {n.op for n in g.node}
check("BatchMatMulV2" in ops and "_Arg" in ops, "run graph has our ops")

check(plugins.get("model_trace") == "graph_run_metadata", "trace plugin graph_run_metadata")
rm = config_pb2.RunMetadata.FromString(
    tensor_util.make_ndarray(acc.Tensors("model_trace")[0].tensor_proto).item())
check(len(rm.function_graphs) == 1, "one function graph")
names = {n.name for n in rm.function_graphs[0].pre_optimization_graph.node}
check({"arg0", "arg1", "BatchMatMulV2", "Relu"} <= names, "trace graph nodes")
check(len(rm.step_stats.dev_stats[0].node_stats) >= 6, "step_stats timings")

# 2. The profile.
(xplane,) = glob.glob(os.path.join(run, "plugins", "profile", "*", "*.xplane.pb"))
if tf is not None:
    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin as prof

    data, ok = prof.xspace_to_tools_data([xplane], "trace_viewer", {})
    check(ok and b"BatchMatMulV2" in data, "profile opens in the trace viewer conversion")
    data, ok = prof.xspace_to_tools_data([xplane], "framework_op_stats", {})
    check(ok and b"BatchMatMulV2" in data, "profile opens in the TF op stats tool")
else:
    print("SKIPPED part: tensorflow not importable, profile conversion not checked")


# 3. A real server.
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.read()


for load_fast in ["true", "false"]:
    if load_fast == "true":
        try:
            import tensorboard_data_server  # noqa: F401
        except ImportError:
            print("SKIPPED part: no tensorboard_data_server for --load_fast=true")
            continue
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", scratch, "--host", "127.0.0.1",
         "--port", str(port), "--reload_interval", "1", "--load_fast", load_fast],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        points = None
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                points = json.loads(get(port, "/data/plugin/scalars/scalars?run=train&tag=loss"))
                if len(points) == 10:
                    break
            except Exception:
                pass
            time.sleep(0.5)
        check(points is not None and [p[1] for p in points] == list(range(10)) and
              all(abs(p[2] - 1.0 / (p[1] + 1)) < 1e-6 for p in points),
              "tensorboard server (load_fast=%s) returns our scalars" % load_fast)
        graph = get(port, "/data/plugin/graphs/graph?run=train&tag=model_trace").decode()
        check('op: "BatchMatMulV2"' in graph, "server returns the trace graph")
        info = json.loads(get(port, "/data/plugin/graphs/info"))
        check("train" in info and info["train"]["run_graph"], "server lists the run graph")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
print("PASSED")
