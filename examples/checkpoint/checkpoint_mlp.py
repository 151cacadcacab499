"""The checkpoint chapter's Python program (CheckPointMlp), whose checkpoints the C++ example
reads with `checkpoint --from-python DIR`.

usage: python checkpoint_mlp.py [--num_batches N] [--batch_size N] [--learning_rate LR]
                                [--save_dir DIR] [--data_dir DIR] [--tf_keras]

Trains the chapter's MLP on MNIST (read from the repository's data/mnist, or --data_dir) with
Adam and saves tf.train.Checkpoint(myAwesomeModel=model) to DIR/model.ckpt-<n> every 100
batches. Keras 3 (TensorFlow's default tf.keras) writes the checkpoint; --tf_keras uses Keras 2
(pip package tf-keras) instead.
"""
import argparse
import gzip
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--num_batches", type=int, default=1000)
parser.add_argument("--batch_size", type=int, default=50)
parser.add_argument("--learning_rate", type=float, default=0.001)
parser.add_argument("--save_dir", default="./save")
parser.add_argument("--data_dir", default=os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "mnist"))
parser.add_argument("--tf_keras", action="store_true")
args = parser.parse_args()
if args.tf_keras:
    import tf_keras as keras
else:
    import keras


def load_images(name):
    with gzip.open(os.path.join(args.data_dir, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)


def load_labels(name):
    with gzip.open(os.path.join(args.data_dir, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int32)


class MNISTLoader:
    def __init__(self):
        self.train_data = load_images("train-images-idx3-ubyte.gz").astype(np.float32) / 255.0
        self.train_label = load_labels("train-labels-idx1-ubyte.gz")
        self.num_train_data = self.train_data.shape[0]

    def get_batch(self, batch_size):
        index = np.random.randint(0, self.num_train_data, batch_size)
        return self.train_data[index, :], self.train_label[index]


class MLP(keras.Model):
    def __init__(self):
        super().__init__()
        self.flatten = keras.layers.Flatten()
        self.dense1 = keras.layers.Dense(units=100, activation=tf.nn.relu)
        self.dense2 = keras.layers.Dense(units=10)

    def call(self, inputs):
        x = self.flatten(inputs)
        x = self.dense1(x)
        x = self.dense2(x)
        return tf.nn.softmax(x)


model = MLP()
data_loader = MNISTLoader()
optimizer = keras.optimizers.Adam(learning_rate=args.learning_rate)
checkpoint = tf.train.Checkpoint(myAwesomeModel=model)  # the model is the object to save
for batch_index in range(1, args.num_batches + 1):
    X, y = data_loader.get_batch(args.batch_size)
    with tf.GradientTape() as tape:
        y_pred = model(X)
        loss = keras.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
        loss = tf.reduce_mean(loss)
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(grads_and_vars=zip(grads, model.variables))
    if batch_index % 100 == 0:  # save every 100 batches
        path = checkpoint.save(os.path.join(args.save_dir, "model.ckpt"))
        print("model saved to %s" % path)
