#!/usr/bin/env python3
"""Prints the Keras 3 reference values hard-coded in tests/unit/keras/application_layers.test.cpp
and tests/unit/ops/nn/batch_norm.test.cpp (TensorFlow 2.21, Keras 3.15, CPU).

Inputs are made from integers, so C++ builds the same float32 values:
    data(n, shift)[i] = float32(((i * 37 + 11 + shift) % 97) / 24.0 - 2.0)
Usage: python reference_values.py [section]   (sections: batch_norm, ...)
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import keras  # noqa: E402


def data(shape, shift=0):
    n = int(np.prod(shape))
    v = np.array([((i * 37 + 11 + shift) % 97) / 24.0 - 2.0 for i in range(n)])
    return v.astype(np.float32).reshape(shape)


def show(name, a):
    a = np.asarray(a, dtype=np.float32).ravel()
    print(f"// {name}: {len(a)} values")
    def literal(x):
        text = f"{x:.9g}"
        return text + ("f" if any(c in text for c in ".en") else ".0f")

    print("{" + ", ".join(literal(x) for x in a) + "}")


def channel_params(c):
    k = np.arange(c, dtype=np.float64)
    return [
        (1.0 + 0.25 * k).astype(np.float32),  # gamma
        (0.5 - 0.2 * k).astype(np.float32),  # beta
        (0.1 * k - 0.1).astype(np.float32),  # moving_mean
        (0.5 + 0.3 * k).astype(np.float32),  # moving_variance
    ]


def batch_norm():
    for shape in [(2, 3, 3, 4), (5, 3)]:
        c = shape[-1]
        x = data(shape)
        for training in (True, False):
            layer = keras.layers.BatchNormalization()
            layer.build(shape)
            layer.set_weights(channel_params(c))
            y = layer(x, training=training)
            tag = f"{'x'.join(map(str, shape))} training={training}"
            show(f"BatchNormalization {tag} output", y)
            if training:
                show(f"BatchNormalization {tag} moving_mean", layer.moving_mean.numpy())
                show(f"BatchNormalization {tag} moving_variance", layer.moving_variance.numpy())


def pooling():
    x = data((2, 4, 5, 3))
    show("GlobalAveragePooling2D (2, 4, 5, 3)", keras.layers.GlobalAveragePooling2D()(x))
    show("GlobalMaxPooling2D (2, 4, 5, 3)", keras.layers.GlobalMaxPooling2D()(x))
    x = data((2, 5, 6, 3), 5)
    layer = keras.layers.AveragePooling2D(pool_size=3, strides=2, padding="same")
    show("AveragePooling2D(3, strides=2, same) (2, 5, 6, 3) shift 5", layer(x))
    layer = keras.layers.AveragePooling2D(pool_size=(2, 3), padding="valid")
    show("AveragePooling2D((2, 3), valid) (2, 5, 6, 3) shift 5", layer(x))
    x = data((1, 2, 3, 2))
    show("ZeroPadding2D(((1, 2), (0, 1))) (1, 2, 3, 2)",
         keras.layers.ZeroPadding2D(((1, 2), (0, 1)))(x))


def activations():
    x = data((2, 3, 4)) * 4  # [-8, 8]
    cases = [
        ("ReLU()", {}),
        ("ReLU(max_value=6)", {"max_value": 6.0}),
        ("ReLU(max_value=4.5)", {"max_value": 4.5}),
        ("ReLU(negative_slope=0.1)", {"negative_slope": 0.1}),
        ("ReLU(threshold=0.5)", {"threshold": 0.5}),
        ("ReLU(max_value=6, negative_slope=0.2, threshold=1)",
         {"max_value": 6.0, "negative_slope": 0.2, "threshold": 1.0}),
    ]
    for text, kwargs in cases:
        show(f"{text} data((2, 3, 4)) * 4", keras.layers.ReLU(**kwargs)(x))
    show("Activation('relu6') data((2, 3, 4)) * 4", keras.layers.Activation("relu6")(x))
    show("Activation('softmax') data((2, 3, 4))", keras.layers.Activation("softmax")(data((2, 3, 4))))
    images = np.array([(i * 37) % 256 for i in range(24)], dtype=np.uint8).reshape((2, 3, 4))
    show("Rescaling(1 / 127.5, offset=-1) uint8 (i * 37) % 256",
         keras.layers.Rescaling(1 / 127.5, offset=-1)(images))


def merging():
    a, b, c = data((2, 3, 4)), data((2, 3, 4), 1), data((2, 3, 4), 2)
    show("Add()([a, b, c]) shifts 0, 1, 2", keras.layers.Add()([a, b, c]))
    show("Concatenate()([a, b]) shifts 0, 1", keras.layers.Concatenate()([a, b]))
    show("Concatenate(axis=1)([a, b]) shifts 0, 1", keras.layers.Concatenate(axis=1)([a, b]))


def depthwise():
    x = data((2, 5, 6, 3))
    cases = [
        ("DepthwiseConv2D(3, padding='same')", dict(kernel_size=3, padding="same"), (3, 3, 3, 1)),
        ("DepthwiseConv2D(3, strides=2, padding='same', depth_multiplier=2)",
         dict(kernel_size=3, strides=2, padding="same", depth_multiplier=2), (3, 3, 3, 2)),
        ("DepthwiseConv2D((2, 3), dilation_rate=2, use_bias=False)",
         dict(kernel_size=(2, 3), dilation_rate=2, use_bias=False), (2, 3, 3, 1)),
    ]
    for text, kwargs, kernel_shape in cases:
        layer = keras.layers.DepthwiseConv2D(**kwargs)
        layer.build(x.shape)
        # kernel = data(kernel_shape, 7) / 2, bias[k] = 0.1 * k - 0.2
        weights = [data(kernel_shape, 7) / 2]
        if layer.use_bias:
            weights.append((0.1 * np.arange(kernel_shape[2] * kernel_shape[3]) - 0.2)
                           .astype(np.float32))
        layer.set_weights(weights)
        show(f"{text} data((2, 5, 6, 3))", layer(x))


SECTIONS = {
    "batch_norm": batch_norm,
    "depthwise": depthwise,
    "pooling": pooling,
    "activations": activations,
    "merging": merging,
}

if __name__ == "__main__":
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
