"""The deployment chapter's Python program: trains the handbook's MNIST MLP and exports it with
tf.saved_model.save, for the C++ example to serve (`saved_model --mode serve --save_dir DIR`);
with --serve it loads DIR with tf.saved_model.load instead (a C++ export, say) and prints the
test accuracy, as the C++ example does.

usage: python saved_model_mlp.py [--num_batches N] [--batch_size N] [--learning_rate LR]
                                 [--save_dir DIR] [--data_dir DIR] [--tf_keras] [--serve]

The model's call is traced as a tf.function with an input signature (any batch of 28x28x1
images), as the chapter requires of a subclassed model, and exported as signature serving_default. Keras 3
(TensorFlow's default tf.keras) builds the model; --tf_keras uses Keras 2 (pip package tf-keras).
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
parser.add_argument("--save_dir", default="./saved")
parser.add_argument("--data_dir", default=os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "mnist"))
parser.add_argument("--tf_keras", action="store_true")
parser.add_argument("--serve", action="store_true")
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
        self.test_data = load_images("t10k-images-idx3-ubyte.gz").astype(np.float32) / 255.0
        self.test_label = load_labels("t10k-labels-idx1-ubyte.gz")
        self.num_train_data = self.train_data.shape[0]
        self.num_test_data = self.test_data.shape[0]

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


data_loader = MNISTLoader()
if args.serve:
    model = tf.saved_model.load(args.save_dir)
    infer = model.signatures["serving_default"]
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    for start in range(0, data_loader.num_test_data - args.batch_size + 1, args.batch_size):
        y_pred = list(infer(tf.constant(data_loader.test_data[start:start + args.batch_size])).values())[0]
        accuracy.update_state(data_loader.test_label[start:start + args.batch_size], y_pred)
    print("loaded %s\ntest accuracy: %f" % (args.save_dir, accuracy.result()))
    raise SystemExit(0)

model = MLP()
optimizer = keras.optimizers.Adam(learning_rate=args.learning_rate)
for batch_index in range(1, args.num_batches + 1):
    X, y = data_loader.get_batch(args.batch_size)
    with tf.GradientTape() as tape:
        y_pred = model(X)
        loss = keras.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
        loss = tf.reduce_mean(loss)
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(grads_and_vars=zip(grads, model.variables))
# SavedModel holds graphs: the call is traced for any batch of 28x28x1 images.
call = tf.function(model.call, input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32)])
tf.saved_model.save(model, args.save_dir, signatures={"serving_default": call.get_concrete_function()})
print("trained %d batches; exported to %s" % (args.num_batches, args.save_dir))
