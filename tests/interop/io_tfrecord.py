#!/usr/bin/env python3
"""TFRecord / tf.train.Example interop, both directions, all compressions.

usage: io_tfrecord.py PATH/TO/interop_io_tfrecord
Exit 77 (skipped) when TensorFlow does not import.
"""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
except Exception as err:  # noqa: BLE001
    print(f"skipped: TensorFlow does not import ({err})")
    sys.exit(77)

EXE = sys.argv[1]
KINDS = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}
# The chapter's description, plus a fixed-length float vector and a variable-length list.
DESCRIPTION = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "weights": tf.io.FixedLenFeature([2], tf.float32),
    "tags": tf.io.VarLenFeature(tf.string),
}
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("MISMATCH:", what)


with tempfile.TemporaryDirectory() as d:
    # --- tapeflow writes, TensorFlow reads ---
    subprocess.run([EXE, "write", d], check=True)
    for name, comp in KINDS.items():
        path = os.path.join(d, f"cpp_{name}.tfrecord")
        n = 0
        for i, rec in enumerate(tf.data.TFRecordDataset(path, compression_type=comp)):
            f = tf.io.parse_single_example(rec, DESCRIPTION)
            image = tf.io.decode_jpeg(f["image"])
            at = f"{path} record {i}"
            check(int(f["label"]) == i % 2, at + " label")
            check(tuple(image.shape) == (8 + i, 10, 3), at + f" image shape {image.shape}")
            check(f["weights"].numpy().tolist() == [i / 2, -i], at + " weights")
            check([t.decode() for t in f["tags"].values.numpy()] == [f"t{k}" for k in range(i)],
                  at + " tags")
            # tapeflow's bytes are TensorFlow's deterministic serialization
            ex = tf.train.Example.FromString(rec.numpy())
            check(ex.SerializeToString(deterministic=True) == rec.numpy(), at + " bytes")
            n += 1
        check(n == 6, f"{path}: {n} records")

    # --- TensorFlow writes, tapeflow reads ---
    rng = np.random.default_rng(0)
    rows = []
    examples = []
    for i in range(7):
        h, w = 5 + 3 * i, 7 + i
        pixels = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        jpeg = tf.io.encode_jpeg(pixels).numpy()
        decoded = tf.io.decode_jpeg(jpeg).numpy()
        weights = [0.25 * i, 1.0 - i]
        tags = [b"x" * k for k in range(i % 3)]
        feature = {
            "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i * 3 - 5])),
            "weights": tf.train.Feature(float_list=tf.train.FloatList(value=weights)),
            "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags)),
        }
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
        rows.append([i, i * 3 - 5, h, w, 3, int(decoded.astype(np.int64).sum()), weights[0],
                     weights[1], len(tags)])
    for name, comp in KINDS.items():
        with tf.io.TFRecordWriter(os.path.join(d, f"py_{name}.tfrecord"), options=comp) as w:
            for ex in examples:
                w.write(ex.SerializeToString(deterministic=True))
    with open(os.path.join(d, "py_manifest.txt"), "w") as out:
        for row in rows:
            out.write(" ".join(str(v) for v in row) + "\n")
    r = subprocess.run([EXE, "read", d])
    check(r.returncode == 0, "tapeflow could not read TensorFlow's files")

    # --- FixedLenSequenceFeature: TensorFlow's parse against tapeflow's, Example by Example
    # and as one padded batch ---
    SEQ = {
        "frames": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True,
                                                default_value=-1.0),
        "ids": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        "words": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True,
                                               default_value="<pad>"),
        "label": tf.io.FixedLenFeature([], tf.int64),
    }
    seq_records = []
    for i in range(6):
        feature = {"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}
        if i != 2:  # example 2 has no sequences at all
            n = int(rng.integers(0, 5))
            feature["frames"] = tf.train.Feature(float_list=tf.train.FloatList(
                value=rng.standard_normal(2 * n).astype(np.float32).tolist()))
        if i % 3 != 1:
            feature["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(
                value=rng.integers(-2**40, 2**40, size=int(rng.integers(0, 6))).tolist()))
        if i != 4:
            feature["words"] = tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[bytes([97 + k % 26]) * (k + 1) + b"\x00\xff" for k in range(i + 1)]))
        seq_records.append(tf.train.Example(features=tf.train.Features(feature=feature))
                           .SerializeToString())
    with tf.io.TFRecordWriter(os.path.join(d, "py_seq.tfrecord")) as w:
        for rec in seq_records:
            w.write(rec)

    def seq_line(tag, key, t):
        arr = t.numpy()
        if t.dtype == tf.string:
            vals = [v.hex() for v in arr.reshape(-1).tolist()]
        elif t.dtype == tf.float32:
            vals = [format(float(v), ".9g") for v in arr.reshape(-1).tolist()]
        else:
            vals = [str(int(v)) for v in arr.reshape(-1).tolist()]
        return f"{tag} {key} shape={','.join(str(s) for s in arr.shape)} values={';'.join(vals)}"

    want = []
    for i, rec in enumerate(seq_records):
        p = tf.io.parse_single_example(rec, SEQ)
        want += [seq_line(f"single{i}", k, p[k]) for k in sorted(SEQ)]
    p = tf.io.parse_example(seq_records, SEQ)
    want += [seq_line("batch", k, p[k]) for k in sorted(SEQ)]
    r = subprocess.run([EXE, "seq", d])
    check(r.returncode == 0, "tapeflow could not parse the sequence Examples")
    if r.returncode == 0:
        with open(os.path.join(d, "cpp_seq.txt")) as f:
            got = f.read().splitlines()
        check(len(got) == len(want), f"sequence results: {len(got)} lines, want {len(want)}")
        for g, w_ in zip(got, want):
            check(g == w_, f"FixedLenSequenceFeature: tapeflow '{g}' vs TensorFlow '{w_}'")

if failures:
    print(f"interop io_tfrecord: {len(failures)} mismatches")
    sys.exit(1)
print("interop io_tfrecord: OK (tapeflow -> TensorFlow and TensorFlow -> tapeflow, none/GZIP/ZLIB;"
      " FixedLenSequenceFeature)")
