// tf.keras.applications.VGG16 (Simonyan & Zisserman 2014), layer for layer as Keras 3 builds it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/applications/application.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::applications {

/// Keras's arguments of `VGG16(...)` (`input_tensor` aside). `weights` defaults to none
/// (Keras: "imagenet"), as pretrained weights cannot be downloaded here.
struct VGG16Options {
  /// (height, width, channels), at least 32x32; -1 for an unknown height or width (Keras'
  /// None); default 224x224x3 with the top, (None, None, 3) without.
  std::optional<std::array<std::int64_t, 3>> input_shape = std::nullopt;
  bool include_top = true;  ///< the classifier: Flatten + Dense "fc1", "fc2", "predictions"
  /// "" (random weights), or the path of a weights file (`.weights.h5`, `.keras` or a
  /// checkpoint prefix), loaded with model.load_weights once built; "imagenet" cannot be
  /// downloaded here (tf::unimplemented: save it in Python and pass its path).
  std::string weights = "";
  std::string pooling = "";     ///< without the top: "" (4-D features), "avg" or "max"
  std::int64_t classes = 1000;  ///< classifier outputs, with the top
  std::string classifier_activation = "softmax";   ///< "softmax", or "" / "linear" (logits)
  std::optional<std::string> name = std::nullopt;  ///< the model's name; default "vgg16"
};

/// VGG16 (tf.keras.applications.VGG16): the same 22 layers, names, weights and order as Keras
/// 3 (`layers()`), built at construction; 138,357,544 parameters by default (550 MB of
/// float32: fc1 alone is 25088x4096), 14,714,688 without the top.
///
///     tf::keras::applications::VGG16 model({.input_shape = {{32, 32, 3}}, .include_top = false,
///                                           .pooling = "max"});
///     auto features = model(images).as<float, 2>();  // [N, 32, 32, 3] -> [N, 512]
class VGG16 : public Application {
 public:
  /// Builds the model for `options`.
  explicit VGG16(const VGG16Options& options = {})
      : Application(options.name.value_or("vgg16"),
                    detail::keras_impl::application_input_shape(common(options), "VGG16", 224, 32),
                    options.weights) {
    detail::keras_impl::application_weights(options.weights, "VGG16");
    Node x = 0;
    constexpr std::array<std::array<std::int64_t, 2>, 5> blocks{
        {{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}}};
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::string prefix = "block" + std::to_string(b + 1) + "_";
      for (std::int64_t c = 1; c <= blocks[b][1]; ++c) {
        x = conv2d(x, prefix + "conv" + std::to_string(c), blocks[b][0], 3, 1, true, true,
                   keras::Activation("relu"));
      }
      x = max_pooling2d(x, prefix + "pool", 2, 2);
    }
    if (options.include_top) {
      x = flatten(x, "flatten");
      x = dense(x, "fc1", 4096, keras::Activation("relu"));
      x = dense(x, "fc2", 4096, keras::Activation("relu"));
      x = dense(x, "predictions", options.classes,
                detail::keras_impl::classifier_activation(options.classifier_activation));
    } else {
      x = pool_features(x, options.pooling);
    }
    load_weights_file();
  }

 private:
  static CommonOptions common(const VGG16Options& o) {
    return {.input_shape = o.input_shape,
            .include_top = o.include_top,
            .weights = o.weights,
            .pooling = o.pooling,
            .classes = o.classes,
            .classifier_activation = o.classifier_activation,
            .name = o.name};
  }
};

}  // namespace keras::applications
TAPEFLOW_END_NAMESPACE
