"""Writes the TensorFlow-made SavedModels that tests/unit/saved_model/parse.test.cpp reads.

Run from the repository root with a Python that has TensorFlow 2.21 and Keras 3:
    python tests/data/saved_model/make_saved_models.py
Each model is the whole directory TensorFlow writes (saved_model.pb, fingerprint.pb,
variables/), so a loader test can use the same files. Seeds are fixed, but the files also hold
TensorFlow's version strings and a fingerprint, so a rerun gives other bytes.
"""

import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Scale(tf.Module):
    """One variable and one tf.function with an input signature."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0], [2.0], [3.0]], name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        return tf.matmul(x, self.w)


def keep(save, name):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        save(path)
        out = os.path.join(HERE, name)
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(path, out)


def main():
    tf.random.set_seed(0)
    keras.utils.set_random_seed(0)
    module = Scale()
    keep(lambda d: tf.saved_model.save(module, d), "tf_module")

    model = keras.Sequential(
        [
            keras.Input(shape=(4,), name="features"),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(2),
        ]
    )
    keep(lambda d: tf.saved_model.save(model, d), "keras_mlp")

    keras.utils.set_random_seed(0)
    cnn = keras.Sequential(
        [
            keras.Input(shape=(6, 6, 1), name="image"),
            keras.layers.Conv2D(2, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    keep(lambda d: tf.saved_model.save(cnn, d), "keras_cnn")
    loader_models()


def loader_models():
    """The other writers tf::saved_model::load reads: Keras 3's model.export and tf_keras."""
    keras.utils.set_random_seed(0)
    exported = keras.Sequential(
        [
            keras.Input(shape=(4,), name="features"),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(2),
        ]
    )
    keep(lambda d: exported.export(d, verbose=False), "keras_export")

    import tf_keras  # noqa: E402  (the build's venv has it)

    tf_keras.utils.set_random_seed(0)
    legacy = tf_keras.Sequential(
        [
            tf_keras.layers.Dense(8, activation="relu", input_shape=(4,)),
            tf_keras.layers.Dense(2, activation="softmax"),
        ]
    )
    keep(lambda d: tf.saved_model.save(legacy, d), "tf_keras_mlp")


if __name__ == "__main__":
    main()
