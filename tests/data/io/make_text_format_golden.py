"""Writes text_format_graph_def.pbtxt: a GraphDef printed as tf.io.write_graph(..., as_text=True)
prints it (text_format.MessageToString), the golden of tests/unit/io/text_format.test.cpp.

Run with TensorFlow installed, from this directory: python3 make_text_format_golden.py
"""
from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2, types_pb2

g = graph_pb2.GraphDef()
n = g.node.add(); n.name = "a\"b\\c\n\x01\u00e9"; n.op = "Const"; n.input.extend(["x:1", "^y"])
n.attr["zz"].f = 0.1
n.attr["T"].type = types_pb2.DT_FLOAT
n.attr["Tshape"].type = types_pb2.DT_INT32
n.attr["a"].list.f.extend([1.0, 0.5, 1e20, 3.4028235e38, float('inf'), float('nan'), -0.0, 1e-7, 123456789.0])
n.attr["b"].list.SetInParent()
n.attr["c"].s = b"\x00\xff\x7f'\t\xc3\xa9"
n.attr["e"].shape.unknown_rank = True
n.attr["f"].i = -5
n.attr["g"].list.type.extend([1, 20, 99])
n.attr["h"].type = 20
n.attr["k"].func.name = "fn"
n.attr["k"].func.attr["x"].i = 1
n.attr["l"].placeholder = "p"
n.attr["v"].tensor.dtype = types_pb2.DT_FLOAT
n.attr["v"].tensor.tensor_shape.dim.add().size = 2
n.attr["v"].tensor.tensor_content = b"\x00\x00\x80?\x00\x00\x00\xbf"
n.attr["w"].tensor.dtype = types_pb2.DT_DOUBLE
n.attr["w"].tensor.tensor_shape.SetInParent()
n.attr["w"].tensor.double_val.append(0.1)
g.versions.producer = 1
g.versions.min_consumer = 12
with open("text_format_graph_def.pbtxt", "w", encoding="utf-8") as f:
    f.write(text_format.MessageToString(g))
