"""Writes the layer lists tests/unit/keras/applications.test.cpp compares with.

One file per model: a line per entry of Keras 3's `model.layers` (the InputLayer first),
`<name> <class> <weight shapes>`, the shapes as `[3,3,3,32]` joined by `;` (`-` for none),
then a last line `params <model.count_params()>`. Default names Keras uniquifies per process
(`input_layer_4`, `global_average_pooling2d_1`) lose their suffix.

    build/default/venv/bin/python tests/data/keras_applications/reference.py

(TensorFlow 2.21, Keras 3.15.)
"""
import os
import re

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
A = keras.applications
MODELS = {
    "mobilenet_v2": lambda: A.MobileNetV2(weights=None),
    "mobilenet_v2_alpha035_96": lambda: A.MobileNetV2(
        weights=None, alpha=0.35, input_shape=(96, 96, 3)),
    "resnet50": lambda: A.ResNet50(weights=None),
    "vgg16_notop_32_max": lambda: A.VGG16(
        weights=None, include_top=False, input_shape=(32, 32, 3), pooling="max"),
}
DEFAULT = re.compile(r"^(input_layer|global_average_pooling2d|global_max_pooling2d)_\d+$")


def main():
    for key, make in MODELS.items():
        model = make()
        lines = []
        for layer in model.layers:
            name = DEFAULT.sub(r"\1", layer.name)
            shapes = ";".join(
                "[" + ",".join(str(d) for d in w.shape) + "]" for w in layer.weights)
            lines.append(f"{name} {layer.__class__.__name__} {shapes or '-'}")
        lines.append(f"params {model.count_params()}")
        with open(os.path.join(HERE, key + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(key, model.count_params())


if __name__ == "__main__":
    main()
