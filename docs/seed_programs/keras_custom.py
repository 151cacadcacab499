# The notes' custom layer, loss and metric (Model and Layer section). The notes' MyLayer is a
# skeleton; its body here is the handbook's LinearLayer, which the C++ MyLayer is.
import tensorflow as tf


class MyLayer(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def build(self, input_shape):     # input_shape: the first call's inputs' shape
        self.w = self.add_weight(name='w', shape=[input_shape[-1], self.units])
        self.b = self.add_weight(name='b', shape=[self.units], initializer=tf.zeros_initializer())

    def call(self, inputs):
        y_pred = tf.matmul(inputs, self.w) + self.b
        return y_pred


class MeanSquaredError(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(y_pred - y_true))


class SparseCategoricalAccuracy(tf.keras.metrics.Metric):
    def __init__(self):
        super().__init__()
        self.init = tf.zeros_initializer()
        self.total = self.add_weight(name='total', dtype=tf.int32,
                                     initializer=self.init)
        self.count = self.add_weight(name='count', dtype=tf.int32,
                                     initializer=self.init)

    def update_state(self, y_true, y_pred, sample_weight=None):
        pred = tf.argmax(y_pred, axis=-1, output_type=tf.int32)
        values = tf.cast(tf.equal(y_true, pred), tf.int32)
        self.total.assign_add(tf.shape(y_true)[0])
        self.count.assign_add(tf.reduce_sum(values))

    def result(self):
        return self.count / self.total
