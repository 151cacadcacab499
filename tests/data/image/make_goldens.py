"""Golden values for tests/unit/image/*.test.cpp, computed with TensorFlow.

Run: /tmp/tfvenv/bin/python tests/data/image/make_goldens.py   (writes goldens.txt, tiny.jpg, tiny.png)
Each line of goldens.txt: <name> <rank> <dims...> <values...> (floats printed with 9 digits).
"""
import os
import numpy as np
import tensorflow as tf

here = os.path.dirname(os.path.abspath(__file__))


def test_image(h, w, c):
    # the same formula the C++ tests use
    i, j, k = np.meshgrid(np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    return ((i * 37 + j * 11 + k * 71) % 256).astype(np.uint8)


lines = []


def emit(name, t):
    a = np.asarray(t)
    vals = " ".join(("%.9g" % v) for v in a.reshape(-1).astype(np.float64))
    lines.append("%s %d %s %s" % (name, a.ndim, " ".join(str(d) for d in a.shape), vals))


img = test_image(5, 7, 3)
for (h, w) in [(3, 4), (8, 11), (5, 7), (10, 3)]:
    emit("bilinear_%dx%d" % (h, w), tf.image.resize(img, (h, w), method="bilinear"))
    emit("nearest_%dx%d" % (h, w), tf.image.resize(img, (h, w), method="nearest"))
for k in range(4):
    emit("rot90_k%d" % k, tf.image.rot90(img, k=k))
emit("flip_left_right", tf.image.flip_left_right(img))
emit("flip_up_down", tf.image.flip_up_down(img))
emit("u8_to_float", tf.image.convert_image_dtype(img, tf.float32))
f = tf.constant([[[0.0], [0.25], [0.5]], [[0.999], [1.0], [0.0031]]], tf.float32)
emit("float_to_u8", tf.image.convert_image_dtype(f, tf.uint8))

big = test_image(16, 24, 3)
jpg = tf.io.encode_jpeg(big, quality=90).numpy()
open(os.path.join(here, "tiny.jpg"), "wb").write(jpg)
emit("tiny_jpg_decoded", tf.io.decode_jpeg(jpg))
emit("tiny_jpg_decoded_gray", tf.io.decode_jpeg(jpg, channels=1))
png = tf.io.encode_png(test_image(6, 5, 4)).numpy()
open(os.path.join(here, "tiny.png"), "wb").write(png)
emit("tiny_png_decoded", tf.io.decode_png(png))
emit("tiny_jpg_resized", tf.image.resize(tf.io.decode_jpeg(jpg), (7, 9)))

with open(os.path.join(here, "goldens.txt"), "w") as out:
    out.write("\n".join(lines) + "\n")
print("wrote", len(lines), "goldens")
