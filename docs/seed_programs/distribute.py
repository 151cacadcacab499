# The TF2 notes' distributed-training section: MirroredStrategy, the model built and compiled
# under strategy.scope(), then fit (the notes' four lines, with the MNIST CNN and its data).
import tensorflow as tf
from zh.model.mnist.cnn import CNN

strategy = tf.distribute.MirroredStrategy()
print('Number of devices: %d' % strategy.num_replicas_in_sync)
with strategy.scope():
    model = CNN()
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3),
                  loss=tf.keras.losses.sparse_categorical_crossentropy,
                  metrics=[tf.keras.metrics.sparse_categorical_accuracy])
model.fit(x, y, batch_size=batch_size, epochs=epochs)
