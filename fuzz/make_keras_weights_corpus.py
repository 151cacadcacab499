"""Writes the seeds of fuzz/corpus/keras_weights (fuzz/keras_weights.fuzz.cpp) that the files of
tests/data/keras_weights do not cover: the seed CNN compiled with Adam after one step (so the file
has an `optimizer` group) and an MLP (another structure). Each file starts with the target's mode
byte. The other seeds are tests/data/keras_weights' cnn.weights.h5 and cnn.keras under modes.

    build/default/venv/bin/python fuzz/make_keras_weights_corpus.py
"""
import os
import tempfile

import keras
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "keras_weights")
TMP = tempfile.mkdtemp()

# The seed CNN, as tests/data/keras_weights/make_keras_weights.py saved it.
cnn = keras.models.load_model(os.path.join(os.path.dirname(OUT), "..", "..", "tests", "data",
                                           "keras_weights", "cnn.keras"))
cnn.compile(optimizer=keras.optimizers.Adam(), loss="mse")
cnn.train_on_batch(np.zeros((2, 6, 6, 1), np.float32), np.zeros((2, 3), np.float32))
cnn.save_weights(os.path.join(TMP, "adam.weights.h5"))
mlp = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
mlp.save_weights(os.path.join(TMP, "mlp.weights.h5"))

# Mode bits: 1 = .keras archive, 2 = skip_mismatch, 4 = compile with Adam first.
for name, mode, file in [("cnn_adam_weights_h5_compiled", 4, "adam.weights.h5"),
                         ("cnn_adam_weights_h5", 0, "adam.weights.h5"),
                         ("mlp_weights_h5_skip", 2, "mlp.weights.h5")]:
    with open(os.path.join(TMP, file), "rb") as f, open(os.path.join(OUT, name), "wb") as out:
        out.write(bytes([mode]) + f.read())
