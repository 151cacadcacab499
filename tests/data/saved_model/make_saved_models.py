"""Writes the TensorFlow-made SavedModels that tests/unit/saved_model/parse.test.cpp reads.

Run from the repository root with a Python that has TensorFlow 2.21, Keras 3 and tf_keras:
    python tests/data/saved_model/make_saved_models.py            # every directory
    python tests/data/saved_model/make_saved_models.py sequence   # only sequence_models()
Each model is the whole directory TensorFlow writes (saved_model.pb, fingerprint.pb,
variables/), so a loader test can use the same files. Seeds are fixed, but the files also hold
TensorFlow's version strings and a fingerprint, so a rerun gives other bytes.
"""

import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
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
    sequence_models()


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


class TextRNN(keras.Model):
    """The seed's text model (one-hot characters through an LSTMCell, Dense, softmax) under
    Keras 3, as the seed writes it but for `get_initial_state`, which takes only the batch
    size in Keras 3."""

    def __init__(self, num_chars, batch_size, seq_length, units):
        super().__init__()
        self.num_chars = num_chars
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.cell = keras.layers.LSTMCell(units=units)
        self.dense = keras.layers.Dense(units=self.num_chars)

    def call(self, inputs, from_logits=False):
        inputs = tf.one_hot(inputs, depth=self.num_chars)
        state = self.cell.get_initial_state(batch_size=self.batch_size)
        for t in range(self.seq_length):
            output, state = self.cell(inputs[:, t, :], state)
        logits = self.dense(output)
        return logits if from_logits else tf.nn.softmax(logits)

    @property
    def _default_save_signature(self):
        # Keras 3 would trace a float32 default signature, which tf.one_hot rejects; the
        # signature below (int32 ids) is the one saved.
        return None


def text_ids(batch, steps, num_chars):
    """ids[i] = (3 i + i // 5) % num_chars over the flat [batch, steps] buffer (the C++ test
    builds the same)."""
    i = np.arange(batch * steps)
    return ((3 * i + i // 5) % num_chars).reshape(batch, steps).astype(np.int32)


def show(name, loaded, key, x):
    """Prints what TensorFlow's loader computes: the tests' expected values."""
    out = loaded.signatures["serving_default"](**{key: tf.constant(x)})
    for k, v in out.items():
        print(name, k, np.array2string(v.numpy()[:4], precision=9, separator=", "))


def sequence_models():
    """The seed's LSTM text model and Embedding models, with what TensorFlow computes."""
    # Batch 32 x units 32: the zero state has 1024 elements, so tf.zeros is a Fill (a splat
    # Const below 1000 elements), as in the seed's full-size model.
    keras.utils.set_random_seed(0)
    rnn = TextRNN(num_chars=10, batch_size=32, seq_length=5, units=32)
    ids = text_ids(32, 5, 10)
    rnn(ids)
    serve = tf.function(lambda inputs: rnn(inputs)).get_concrete_function(
        tf.TensorSpec([32, 5], tf.int32, name="inputs")
    )
    keep(lambda d: tf.saved_model.save(rnn, d, signatures=serve), "keras_rnn")
    show("keras_rnn", tf.saved_model.load(os.path.join(HERE, "keras_rnn")), "inputs", ids)

    # Float ids: Keras 3's Embedding casts them to int32 (truncating) and wraps negative ones.
    keras.utils.set_random_seed(0)
    embedding = keras.Sequential(
        [
            keras.Input(shape=(6,), name="tokens"),
            keras.layers.Embedding(10, 4),
            keras.layers.Flatten(),
            keras.layers.Dropout(0.5),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    x = np.array([[0, 1.5, 2.7, 9, -1, 4], [3, 3, 8.2, -3, 5, 6]], np.float32)
    keep(lambda d: tf.saved_model.save(embedding, d), "keras_embedding")
    show(
        "keras_embedding",
        tf.saved_model.load(os.path.join(HERE, "keras_embedding")),
        "inputs",
        x,
    )

    import tf_keras  # noqa: E402  (the build's venv has it)

    tf_keras.utils.set_random_seed(0)
    legacy = tf_keras.Sequential(
        [
            tf_keras.layers.Embedding(10, 4, input_length=6),
            tf_keras.layers.Flatten(),
            tf_keras.layers.Dropout(0.5),
            tf_keras.layers.Dense(3, activation="softmax"),
        ]
    )
    legacy.build((None, 6))
    x = np.array([[0, 1.5, 2.7, 9, 1, 4], [3, 3, 8.2, 7, 5, 6]], np.float32)
    keep(lambda d: tf.saved_model.save(legacy, d), "tf_keras_embedding")
    show(
        "tf_keras_embedding",
        tf.saved_model.load(os.path.join(HERE, "tf_keras_embedding")),
        "embedding_input",
        x,
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["sequence"]:
        sequence_models()
    else:
        main()
