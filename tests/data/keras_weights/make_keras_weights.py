"""Writes the Keras 3 files tests/unit/keras/weights.test.cpp reads: a small CNN (Conv2D,
BatchNormalization, MaxPooling2D, Flatten, Dense) with weights w[i] = sin(i + 0.1 * k) for the
k-th weight (flattened, C order), saved as `cnn.weights.h5` (model.save_weights), `cnn.keras`
(model.save) and its prediction for x[i] = cos(i) / 2 (shape 1x6x6x1) as `cnn_prediction.txt`;
and `external.weights.h5`, an MLP's weights with one dataset stored outside the file.

    build/default/venv/bin/python tests/data/keras_weights/make_keras_weights.py
"""
import os

import keras
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
model = keras.Sequential([
    keras.Input((6, 6, 1)),
    keras.layers.Conv2D(2, 3, activation="relu"),
    keras.layers.BatchNormalization(),
    keras.layers.MaxPooling2D(),
    keras.layers.Flatten(),
    keras.layers.Dense(3, activation="softmax"),
])
weights = []
for k, w in enumerate(model.get_weights()):
    i = np.arange(w.size, dtype=np.float64)
    v = np.sin(i + 0.1 * k).reshape(w.shape)
    if k == 5:  # moving_variance must be positive
        v = 1.0 + 0.5 * v
    weights.append(v.astype(np.float32))
model.set_weights(weights)
model.save_weights(os.path.join(here, "cnn.weights.h5"))
model.save(os.path.join(here, "cnn.keras"))
x = (np.cos(np.arange(36, dtype=np.float64)) / 2).astype(np.float32).reshape(1, 6, 6, 1)
y = model.predict(x, verbose=0)
np.savetxt(os.path.join(here, "cnn_prediction.txt"), y.reshape(-1), fmt="%.9g")

# A weights file of the test's MLP (Dense(4) on 3 inputs, Dense(2)) whose first kernel is stored
# in another file (HDF5 external storage): load_weights must refuse to read outside the file.
import h5py  # noqa: E402  (Keras 3 depends on it)

with h5py.File(os.path.join(here, "external.weights.h5"), "w") as f:
    for path, shapes in [("layers/dense/vars", [(3, 4), (4,)]),
                         ("layers/dense_1/vars", [(4, 2), (2,)])]:
        group = f.create_group(path)
        group.attrs["name"] = path.split("/")[1]
        for i, shape in enumerate(shapes):
            size = int(np.prod(shape)) * 4
            external = [("outside.bin", 0, size)] if (path, i) == ("layers/dense/vars", 0) else None
            group.create_dataset(str(i), shape=shape, dtype="<f4", external=external)
