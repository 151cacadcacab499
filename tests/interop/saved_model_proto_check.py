#!/usr/bin/env python3
"""TensorFlow reads the SavedModel messages tapeflow encodes (saved_model/detail/proto.hpp).

usage: saved_model_proto_check.py SAMPLE_DIR [SCRATCH_DIR]

SAMPLE_DIR holds the saved_model.pb that the unit test case "writes the sample SavedModel for
saved_model_proto_check.py" (tests/unit/saved_model/proto.test.cpp) writes into its working
directory as saved_model_proto_sample/: docs/formats.md 12.7's smallest SavedModel,
y = BiasAdd(MatMul(x, w), b), filled by hand, without a variables bundle.

1. TensorFlow's own descriptors (saved_model_pb2) parse it and every field the test set reads
   back by name; serializing the parsed message again (deterministically) gives the same bytes,
   so no field landed on a number TensorFlow does not know and field order and map order are
   TensorFlow's.
2. TensorFlow's nested_structure_coder decodes the StructuredValues (FullArgSpec, TensorSpecs).
3. A copy in SCRATCH_DIR (default: a temporary directory) gets a variables bundle written here
   with TensorFlow's SaveV2 kernel; tf.saved_model.load and the TF1 session loader load it and
   serving_default computes x @ w + b.
Exits 77 (skipped, printed loudly) when tensorflow does not import.
"""
import inspect
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2, saver_pb2, trackable_object_graph_pb2
    from tensorflow.python.saved_model import nested_structure_coder
except Exception as err:  # noqa: BLE001
    print(f"SKIPPED: saved_model_proto_check needs Python TensorFlow, which does not import ({err})")
    sys.exit(77)

if len(sys.argv) not in (2, 3):
    print(__doc__)
    sys.exit(2)
SAMPLE = sys.argv[1]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def shape_of(proto):
    return None if proto.unknown_rank else [d.size for d in proto.dim]


F32, RES, STR = tf.float32.as_datatype_enum, tf.resource.as_datatype_enum, tf.string.as_datatype_enum

# --- 1. descriptors ---------------------------------------------------------------------------
with open(os.path.join(SAMPLE, "saved_model.pb"), "rb") as f:
    data = f.read()
model = saved_model_pb2.SavedModel()
model.ParseFromString(data)
check(model.SerializeToString(deterministic=True) == data,
      "re-serializing with TensorFlow's descriptors gives the same bytes")
check(model.saved_model_schema_version == 1, "saved_model_schema_version 1")
check(len(model.meta_graphs) == 1, "one MetaGraphDef")
meta = model.meta_graphs[0]
info = meta.meta_info_def
check(list(info.tags) == ["serve"] and info.stripped_default_attrs
      and info.tensorflow_version == "2.21.0" and info.tensorflow_git_version == "tapeflow",
      "meta_info_def: tags, versions, stripped_default_attrs")

graph = meta.graph_def
nodes = {n.name: n for n in graph.node}
check([n.name for n in graph.node] == [
    "w", "b", "serving_default_x", "StatefulPartitionedCall", "NoOp", "saver_filename",
    "restore/tensor_names", "restore/shape_and_slices", "RestoreV2", "assign_w", "assign_b",
    "restore_all", "read_w", "read_b", "SaveV2", "save/Identity"], "top-level node names in order")
check(graph.versions.producer == 2474 and graph.versions.min_consumer == 12, "graph versions")
w = nodes["w"]
check(w.op == "VarHandleOp" and w.attr["dtype"].type == F32
      and shape_of(w.attr["shape"].shape) == [3, 1] and w.attr["shared_name"].s == b"w",
      "VarHandleOp w: dtype, shape, shared_name")
check(shape_of(nodes["serving_default_x"].attr["shape"].shape) == [-1, 3], "placeholder shape [-1, 3]")
call = nodes["StatefulPartitionedCall"]
check(list(call.input) == ["serving_default_x", "w", "b"]
      and list(call.attr["Tin"].list.type) == [F32, RES, RES]
      and list(call.attr["Tout"].list.type) == [F32] and call.attr["f"].func.name == "serve_fn",
      "call node: inputs, Tin, Tout, f")
names = tf.make_ndarray(nodes["restore/tensor_names"].attr["value"].tensor)
check(names.tolist() == [b"w/.ATTRIBUTES/VARIABLE_VALUE", b"b/.ATTRIBUTES/VARIABLE_VALUE"]
      and nodes["restore/tensor_names"].attr["dtype"].type == STR, "string Const value")
check(list(nodes["restore_all"].input) == ["^assign_w", "^assign_b"], "control inputs")
check(list(nodes["RestoreV2"].attr["dtypes"].list.type) == [F32, F32], "RestoreV2 dtypes")

check(len(graph.library.function) == 1, "one library function")
fn = graph.library.function[0]
sig = fn.signature
check(sig.name == "serve_fn" and [(a.name, a.type) for a in sig.input_arg] ==
      [("x", F32), ("w", RES), ("b", RES)] and [(a.name, a.type) for a in sig.output_arg] ==
      [("y", F32)], "function signature")
check([(n.name, n.op, list(n.input)) for n in fn.node_def] == [
    ("rw", "ReadVariableOp", ["w"]), ("rb", "ReadVariableOp", ["b"]),
    ("mm", "MatMul", ["x", "rw:value:0"]), ("add", "BiasAdd", ["mm:product:0", "rb:value:0"])],
    "function body")
check(dict(fn.ret) == {"y": "add:output:0"}, "function ret")
check(fn.attr["_construction_context"].s == b"kEagerRuntime"
      and [shape_of(s) for s in fn.attr["_input_shapes"].list.shape] == [[-1, 3], [], []],
      "function attrs")
check(fn.arg_attr[0].attr["_user_specified_name"].s == b"x", "arg_attr[0]")

saver = meta.saver_def
check((saver.filename_tensor_name, saver.save_tensor_name, saver.restore_op_name) ==
      ("saver_filename:0", "save/Identity:0", "restore_all")
      and saver.version == saver_pb2.SaverDef.V2, "saver_def")
check(list(meta.collection_def["saved_model_main_op"].node_list.value) == ["NoOp"], "collection_def")
serving = meta.signature_def["serving_default"]
x_info, y_info = serving.inputs["x"], serving.outputs["output_0"]
check((x_info.name, x_info.dtype, shape_of(x_info.tensor_shape)) == ("serving_default_x:0", F32, [-1, 3])
      and (y_info.name, y_info.dtype, shape_of(y_info.tensor_shape)) ==
      ("StatefulPartitionedCall:0", F32, [-1, 1])
      and serving.method_name == "tensorflow/serving/predict", "signature_def serving_default")

objects = meta.object_graph_def
check([o.WhichOneof("kind") for o in objects.nodes] ==
      ["user_object", "variable", "variable", "user_object", "bare_concrete_function"],
      "object graph kinds")
root = objects.nodes[0]
check([(c.node_id, c.local_name) for c in root.children] == [(1, "w"), (2, "b"), (3, "signatures")]
      and root.user_object.identifier == "_generic_user_object", "root object")
var_w = objects.nodes[1].variable
check(var_w.dtype == F32 and shape_of(var_w.shape) == [3, 1] and var_w.trainable and var_w.name == "w",
      "SavedVariable w")
sigmap = objects.nodes[3]
check(sigmap.user_object.identifier == "signature_map"
      and (sigmap.user_object.version.producer, sigmap.user_object.version.min_consumer) == (1, 1)
      and [(c.node_id, c.local_name) for c in sigmap.children] == [(4, "serving_default")],
      "signature_map object with its version")
bare = objects.nodes[4].bare_concrete_function
check(bare.concrete_function_name == "serve_fn" and list(bare.argument_keywords) == ["x"]
      and bare.allowed_positional_arguments == 1, "bare_concrete_function")
concrete = objects.concrete_functions["serve_fn"]
check(list(concrete.bound_inputs) == [1, 2], "bound_inputs")

# --- 2. StructuredValues ----------------------------------------------------------------------
decode = nested_structure_coder.decode_proto
check(decode(bare.function_spec.fullargspec) ==
      inspect.FullArgSpec(args=[], varargs=None, varkw=None, defaults=None, kwonlyargs=["x"],
                          kwonlydefaults=None, annotations={}), "FullArgSpec decodes")
check(decode(bare.function_spec.input_signature) is None, "input_signature None")
check(decode(concrete.canonicalized_input_signature) ==
      ((), {"x": tf.TensorSpec([None, 3], tf.float32, name="x")}), "canonicalized_input_signature")
check(decode(concrete.output_signature) ==
      {"output_0": tf.TensorSpec([None, 1], tf.float32, name="output_0")}, "output_signature")

# --- 3. loading, with a variables bundle added ------------------------------------------------
w_value = np.array([[1.0], [2.0], [3.0]], np.float32)
b_value = np.array([0.5], np.float32)
x_value = np.array([[1, 0, 0], [1, 1, 1]], np.float32)
expected = x_value @ w_value + b_value


def load_checks(directory):
    os.makedirs(os.path.join(directory, "variables"), exist_ok=True)
    shutil.copy(os.path.join(SAMPLE, "saved_model.pb"), directory)
    og = trackable_object_graph_pb2.TrackableObjectGraph()
    root_node = og.nodes.add()
    for node_id, name in ((1, "w"), (2, "b")):
        root_node.children.add(node_id=node_id, local_name=name)
    for name in ("w", "b"):
        og.nodes.add().attributes.add(name="VARIABLE_VALUE",
                                      checkpoint_key=f"{name}/.ATTRIBUTES/VARIABLE_VALUE")
    tf.raw_ops.SaveV2(
        prefix=os.path.join(directory, "variables", "variables"),
        tensor_names=["w/.ATTRIBUTES/VARIABLE_VALUE", "b/.ATTRIBUTES/VARIABLE_VALUE",
                      "_CHECKPOINTABLE_OBJECT_GRAPH"],
        shape_and_slices=["", "", ""],
        tensors=[tf.constant(w_value), tf.constant(b_value), tf.constant(og.SerializeToString())])

    loaded = tf.saved_model.load(directory)
    serve = loaded.signatures["serving_default"]
    out = serve(x=tf.constant(x_value))
    check(set(out) == {"output_0"} and np.allclose(out["output_0"].numpy(), expected),
          "tf.saved_model.load: serving_default(x=...) computes x @ w + b")
    check(np.allclose(serve(tf.constant(x_value))["output_0"].numpy(), expected),
          "tf.saved_model.load: positional call")
    check(np.array_equal(loaded.w.numpy(), w_value) and np.array_equal(loaded.b.numpy(), b_value),
          "tf.saved_model.load: variables restored through the object graph")

    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        tf.compat.v1.saved_model.loader.load(sess, ["serve"], directory)
        out = sess.run("StatefulPartitionedCall:0", {"serving_default_x:0": x_value})
        check(np.allclose(out, expected), "TF1 loader: saver_def restore + signature tensors")


if len(sys.argv) == 3:
    scratch = sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    load_checks(scratch)
else:
    with tempfile.TemporaryDirectory() as tmp:
        load_checks(tmp)

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
