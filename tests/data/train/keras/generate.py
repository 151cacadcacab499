"""Writes the small TensorFlow-written checkpoints tests/unit/train/keras_layouts.test.cpp reads.

usage: python generate.py OUT_DIR   (run with TensorFlow 2.16+, keras 3 and tf_keras installed;
       the committed files came from TensorFlow 2.21.0, Keras 3.15.1, tf_keras 2.21.0)

For each case a tiny model (the chapter's MLP shape: Flatten, Dense(4, relu), Dense(3), softmax
on [2, 2, 3] inputs; a Sequential of the same layers, softmax as the last activation; a CNN
(Conv2D, MaxPool2D, Flatten, Dense); Embedding(8, 3) + LSTM(4) + Dense(5); a one-step LSTMCell text model) takes one
optimizer step on a fixed batch, is saved with tf.train.Checkpoint(myAwesomeModel=...,
myAwesomeOptimizer=...), and `<case>/expected.txt` records its predictions on the batch
("pred"), then after one more step ("pred_step").
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

X = (np.arange(12, dtype=np.float32).reshape(2, 2, 3) % 5) * 0.25 - 0.5
IMAGES = (np.arange(32, dtype=np.float32).reshape(2, 4, 4, 1) % 7) * 0.2 - 0.6  # CNN inputs
Y = np.array([0, 2], dtype=np.int32)
TOKENS = np.array([[1, 3, 0], [2, 2, 4]], dtype=np.int32)  # RNN inputs, 5 characters
NEXT = np.array([3, 1], dtype=np.int32)
# Embedding inputs: no id twice. Keras 3 applies an Embedding's gradient as IndexedSlices and
# squares each occurrence of a repeated id separately in Adam's second moment; tf_keras, TensorFlow's
# kernels and tapeflow square the summed gradient (docs/checkpoints.md).
EMB_TOKENS = np.array([[1, 3, 0], [2, 5, 6]], dtype=np.int32)


def models(keras):
    class MLP(keras.Model):
        def __init__(self):
            super().__init__()
            self.flatten = keras.layers.Flatten()
            self.dense1 = keras.layers.Dense(units=4, activation=tf.nn.relu)
            self.dense2 = keras.layers.Dense(units=3)

        def call(self, inputs):
            return tf.nn.softmax(self.dense2(self.dense1(self.flatten(inputs))))

    class RNN(keras.Model):
        def __init__(self):
            super().__init__()
            self.cell = keras.layers.LSTMCell(units=4)
            self.dense = keras.layers.Dense(units=5)

        def call(self, inputs):
            inputs = tf.one_hot(inputs, depth=5)
            state = [tf.zeros([2, 4]), tf.zeros([2, 4])]
            for t in range(3):
                output, state = self.cell(inputs[:, t, :], state)
            return tf.nn.softmax(self.dense(output))

    class CNN(keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = keras.layers.Conv2D(2, [3, 3], padding="same", activation=tf.nn.relu)
            self.pool1 = keras.layers.MaxPool2D(pool_size=[2, 2], strides=2)
            self.flatten = keras.layers.Flatten()
            self.dense = keras.layers.Dense(units=3)

        def call(self, inputs):
            return tf.nn.softmax(self.dense(self.flatten(self.pool1(self.conv1(inputs)))))

    class Embed(keras.Model):
        def __init__(self):
            super().__init__()
            self.emb = keras.layers.Embedding(8, 3)
            self.lstm = keras.layers.LSTM(4)
            self.dense = keras.layers.Dense(units=5)

        def call(self, inputs):
            return tf.nn.softmax(self.dense(self.lstm(self.emb(inputs))))

    def sequential():
        return keras.Sequential([keras.layers.Flatten(),
                                 keras.layers.Dense(4, activation="relu"),
                                 keras.layers.Dense(3, activation="softmax")])
    return {"mlp": MLP, "rnn": RNN, "cnn": CNN, "embedding": Embed, "sequential": sequential}


def optimizer(keras, name):
    return {"adam": lambda: keras.optimizers.Adam(learning_rate=0.01),
            "sgd": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9),
            "rmsprop": lambda: keras.optimizers.RMSprop(learning_rate=0.01)}[name]()


def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


def write(out, flavor, model_name, opt_name):
    if flavor == "keras3":
        import keras
    else:
        import tf_keras as keras
    keras.utils.set_random_seed(1)
    model = models(keras)[model_name]()
    opt = optimizer(keras, opt_name)
    x, y = {"rnn": (TOKENS, NEXT), "embedding": (EMB_TOKENS, NEXT), "cnn": (IMAGES, Y)}.get(
        model_name, (X, Y))
    step(model, opt, x, y)
    case = os.path.join(out, "%s_%s_%s" % (flavor, model_name, opt_name))
    tf.train.Checkpoint(myAwesomeModel=model, myAwesomeOptimizer=opt).save(case + "/ckpt")
    with open(case + "/expected.txt", "w") as f:
        f.write("pred " + " ".join("%.9g" % v for v in model(x).numpy().ravel()) + "\n")
        step(model, opt, x, y)
        f.write("pred_step " + " ".join("%.9g" % v for v in model(x).numpy().ravel()) + "\n")


def main():
    out = sys.argv[1]
    for flavor in ("keras3", "tf_keras"):
        for opt_name in ("adam", "sgd", "rmsprop"):
            write(out, flavor, "mlp", opt_name)
    write(out, "keras3", "sequential", "adam")
    write(out, "tf_keras", "sequential", "adam")
    for flavor in ("keras3", "tf_keras"):
        write(out, flavor, "cnn", "adam")
        write(out, flavor, "embedding", "adam")
    for flavor in ("keras3", "tf_keras"):
        write(out, flavor, "rnn", "adam")


if __name__ == "__main__":
    main()
