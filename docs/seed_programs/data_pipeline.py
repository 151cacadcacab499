# The tf.data chapter's MNIST pipeline: from_tensor_slices, map(rot90), shuffle, batch, and the
# first batch shown with matplotlib.
import tensorflow as tf
import numpy as np
import matplotlib.pyplot as plt

(train_data, train_label), (_, _) = tf.keras.datasets.mnist.load_data()
train_data = np.expand_dims(train_data.astype(np.float32) / 255.0, axis=-1)      # [60000, 28, 28, 1]
mnist_dataset = tf.data.Dataset.from_tensor_slices((train_data, train_label))


def rot90(image, label):
    image = tf.image.rot90(image)
    return image, label


mnist_dataset = mnist_dataset.map(rot90, num_parallel_calls=2)
mnist_dataset = mnist_dataset.shuffle(buffer_size=10000).batch(4)
mnist_dataset = mnist_dataset.prefetch(tf.data.experimental.AUTOTUNE)

for images, labels in mnist_dataset:    # image: [4, 28, 28, 1], labels: [4]
    fig, axs = plt.subplots(1, 4)
    for i in range(4):
        axs[i].set_title(labels.numpy()[i])
        axs[i].imshow(images.numpy()[i, :, :, 0])
    plt.show()
