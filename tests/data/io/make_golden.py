#!/usr/bin/env python3
"""Writes tapeflow's TFRecord / tf.train.Example golden files with pip TensorFlow.

Run from anywhere:  python make_golden.py [outdir]   (default: this script's folder)
Made with TensorFlow 2.21.0, protobuf 7.36 (see tests/unit/io/*.test.cpp for what is checked).

Files:
  records.tfrecord        4 raw records: b"", b"a", b"hello, tfrecord", bytes(range(256))*4
  records.gzip.tfrecord   same records, compression_type="GZIP"
  records.zlib.tfrecord   same records, compression_type="ZLIB"
  examples.tfrecord       the Examples of EXAMPLES below, SerializeToString(deterministic=True)
  handmade.tfrecord       hand-encoded Examples (unpacked lists, unknown fields, reordered map
                          entries); handmade_parsed.txt holds TensorFlow's parse of each
  tf_errors.txt           TensorFlow's parse error messages for the cases the C++ tests mirror
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

RECORDS = [b"", b"a", b"hello, tfrecord", bytes(range(256)) * 4]


def b(*v):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=list(v)))


def f(*v):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(v)))


def i(*v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(v)))


def ex(**feature):
    return tf.train.Example(features=tf.train.Features(feature=feature))


FAKE_JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00fake image bytes\xff\xd9"
EXAMPLES = [
    # 0: the chapter's image + label
    ex(image=b(FAKE_JPEG), label=i(1)),
    # 1: the test vector of docs/formats.md
    ex(x=f(1.0, 2.0)),
    # 2: every kind with several values, negatives and extremes
    ex(bytes=b(b"a", b"", b"ccc"), floats=f(-1.5, 0.0, 3.25e10), ints=i(0, -1, 2**62, -(2**63), 2**63 - 1)),
    # 3: present but empty lists
    ex(empty_bytes=tf.train.Feature(bytes_list=tf.train.BytesList()),
       empty_floats=tf.train.Feature(float_list=tf.train.FloatList()),
       empty_ints=tf.train.Feature(int64_list=tf.train.Int64List())),
    # 4: a Feature with no kind set
    ex(nothing=tf.train.Feature()),
    # 5: features set but empty; 6: nothing at all
    tf.train.Example(features=tf.train.Features()),
    tf.train.Example(),
    # 7: a fixed-shape float matrix and a string vector
    ex(matrix=f(*[float(k) for k in range(6)]), names=b(b"cat", b"dog")),
]


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(num, wtype, payload):
    tag = varint(num << 3 | wtype)
    if wtype == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def entry(key, feature_bytes, value_first=False):
    k = field(1, 2, key)
    v = field(2, 2, feature_bytes)
    return field(1, 2, v + k if value_first else k + v)


import struct  # noqa: E402

HANDMADE = [
    # 0: unpacked int64 list [5, -6, 300] and unpacked float list [1.5, -2.0]
    field(1, 2, entry(b"ints", field(3, 2, field(1, 0, varint(5)) + field(1, 0, varint(-6)) + field(1, 0, varint(300))))
          + entry(b"floats", field(2, 2, field(1, 5, struct.pack("<f", 1.5)) + field(1, 5, struct.pack("<f", -2.0))))),
    # 1: unknown Example fields (varint, fixed64, fixed32, LEN) around the features; map entry
    #    with value before key
    field(7, 0, varint(99)) + field(8, 1, b"\x01" * 8)
    + field(1, 2, entry(b"label", field(3, 2, field(1, 2, varint(7) + varint(8))), value_first=True))
    + field(9, 5, b"\x02" * 4) + field(15, 2, b"junk"),
    # 2: Example field 1 twice (merged): two Features messages
    field(1, 2, entry(b"a", field(3, 2, field(1, 2, varint(1))))) + field(1, 2, entry(b"b", field(1, 2, field(1, 2, b"bee")))),
    # 3: two packed chunks in one Int64List: standard protobuf merges them, TensorFlow's fast
    #    parser rejects them ("Some int64_list slice was not parsed"); tapeflow merges
    field(1, 2, entry(b"label", field(3, 2, field(1, 2, varint(7)) + field(1, 2, varint(8))))),
]

HANDMADE_SPECS = [
    {"ints": tf.io.VarLenFeature(tf.int64), "floats": tf.io.VarLenFeature(tf.float32)},
    {"label": tf.io.FixedLenFeature([2], tf.int64)},
    {"a": tf.io.FixedLenFeature([], tf.int64), "b": tf.io.FixedLenFeature([], tf.string)},
    {"label": tf.io.VarLenFeature(tf.int64)},
]


def write(name, records, compression=None):
    path = os.path.join(OUT, name)
    with tf.io.TFRecordWriter(path, options=compression) as w:
        for r in records:
            w.write(r)
    # read back with TensorFlow to be sure
    got = [x.numpy() for x in tf.data.TFRecordDataset(path, compression_type=compression or "")]
    assert got == list(records), name


def main():
    write("records.tfrecord", RECORDS)
    write("records.gzip.tfrecord", RECORDS, "GZIP")
    write("records.zlib.tfrecord", RECORDS, "ZLIB")
    # Python protobuf writes map entries in hash order; deterministic=True sorts them by key,
    # which is the order tapeflow writes (readers accept any order).
    serialized = [e.SerializeToString(deterministic=True) for e in EXAMPLES]
    write("examples.tfrecord", serialized)
    write("handmade.tfrecord", HANDMADE)
    with open(os.path.join(OUT, "handmade_parsed.txt"), "w") as out:
        for k, (rec, spec) in enumerate(zip(HANDMADE, HANDMADE_SPECS)):
            try:
                parsed = tf.io.parse_single_example(rec, spec)
            except tf.errors.InvalidArgumentError as err:
                out.write(f"{k} error {err.message.splitlines()[0][-60:]}\n")
                continue
            for key in sorted(parsed):
                v = parsed[key]
                if isinstance(v, tf.SparseTensor):
                    v = v.values
                v = v.numpy()
                out.write(f"{k} {key} {v.tolist() if hasattr(v, 'tolist') else v!r}\n")
    cases = {
        "missing": (EXAMPLES[1].SerializeToString(), {"y": tf.io.FixedLenFeature([], tf.float32)}),
        "missing_string": (EXAMPLES[1].SerializeToString(), {"y": tf.io.FixedLenFeature([], tf.string)}),
        "wrong_type": (EXAMPLES[1].SerializeToString(), {"x": tf.io.FixedLenFeature([2], tf.int64)}),
        "wrong_length": (EXAMPLES[1].SerializeToString(), {"x": tf.io.FixedLenFeature([3], tf.float32)}),
        "varlen_wrong_type": (EXAMPLES[1].SerializeToString(), {"x": tf.io.VarLenFeature(tf.string)}),
        "empty_list": (EXAMPLES[3].SerializeToString(), {"empty_ints": tf.io.FixedLenFeature([], tf.int64, default_value=3)}),
        "garbage": (b"\x0a\x05\x01", {"x": tf.io.FixedLenFeature([2], tf.float32)}),
    }
    with open(os.path.join(OUT, "tf_errors.txt"), "w") as out:
        for name, (rec, spec) in cases.items():
            try:
                tf.io.parse_single_example(rec, spec)
                msg = "no error"
            except Exception as err:  # noqa: BLE001
                msg = type(err).__name__ + ": " + getattr(err, "message", str(err)).splitlines()[0]
            out.write(f"{name}: {msg}\n")
    print("wrote golden files to", OUT)


if __name__ == "__main__":
    main()
