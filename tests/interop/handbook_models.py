"""The handbook's MLP, CNN and LSTM text model and the shared batch, in Keras 3 or tf_keras, as
the interop checkers (check_keras_layouts.py, check_saved_model_load.py) build them: the Python
side of handbook_models.hpp, with the same attribute names and the same batch.
"""
import numpy as np
import tensorflow as tf

# The shared batch (mirrored in handbook_models.hpp).
BATCH, NUM_CHARS, SEQ_LENGTH = 4, 30, 8
IMAGES = ((np.arange(BATCH * 28 * 28) * 37 % 256).astype(np.float32) / np.float32(255)).reshape(
    BATCH, 28, 28, 1)  # divided in float32, as C++ does
IMAGE_LABELS = np.array([3, 7, 0, 9], np.int32)
TOKENS = ((np.arange(BATCH * SEQ_LENGTH) * 7 + 3) % NUM_CHARS).astype(np.int32).reshape(
    BATCH, SEQ_LENGTH)
NEXT_CHARS = ((np.arange(BATCH) * 11 + 5) % NUM_CHARS).astype(np.int32)


def model_classes(K, flavor):
    """The three model classes of Keras module K (keras or tf_keras); flavor "keras3" or "tf_keras"."""

    class MLP(K.Model):
        def __init__(self):
            super().__init__()
            self.flatten = K.layers.Flatten()
            self.dense1 = K.layers.Dense(units=100, activation=tf.nn.relu)
            self.dense2 = K.layers.Dense(units=10)

        def call(self, inputs):
            x = self.flatten(inputs)
            x = self.dense1(x)
            x = self.dense2(x)
            return tf.nn.softmax(x)

    class CNN(K.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = K.layers.Conv2D(filters=32, kernel_size=[5, 5], padding="same",
                                         activation=tf.nn.relu)
            self.pool1 = K.layers.MaxPool2D(pool_size=[2, 2], strides=2)
            self.conv2 = K.layers.Conv2D(filters=64, kernel_size=[5, 5], padding="same",
                                         activation=tf.nn.relu)
            self.pool2 = K.layers.MaxPool2D(pool_size=[2, 2], strides=2)
            self.flatten = K.layers.Reshape(target_shape=(7 * 7 * 64,))
            self.dense1 = K.layers.Dense(units=1024, activation=tf.nn.relu)
            self.dense2 = K.layers.Dense(units=10)

        def call(self, inputs):
            x = self.pool1(self.conv1(inputs))
            x = self.pool2(self.conv2(x))
            x = self.dense1(self.flatten(x))
            return tf.nn.softmax(self.dense2(x))

    class RNN(K.Model):
        def __init__(self):
            super().__init__()
            self.cell = K.layers.LSTMCell(units=256)
            self.dense = K.layers.Dense(units=NUM_CHARS)

        def call(self, inputs):
            # The cast is a no-op on the int32 tokens (no node); it lets Keras 3 trace its own
            # default serving function, with float inputs, when the model is saved.
            inputs = tf.one_hot(tf.cast(inputs, tf.int32), depth=NUM_CHARS)
            if flavor == "keras3":  # Keras 3's get_initial_state takes no dtype
                state = self.cell.get_initial_state(batch_size=BATCH)
            else:
                state = self.cell.get_initial_state(batch_size=BATCH, dtype=tf.float32)
            for t in range(SEQ_LENGTH):
                output, state = self.cell(inputs[:, t, :], state)
            return tf.nn.softmax(self.dense(output))

    return {"mlp": MLP, "cnn": CNN, "rnn": RNN}


