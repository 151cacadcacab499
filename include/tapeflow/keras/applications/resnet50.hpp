// tf.keras.applications.ResNet50 (He et al. 2015), layer for layer as Keras 3 builds it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/applications/application.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::applications {

/// Keras's arguments of `ResNet50(...)` (`input_tensor` aside). `weights` defaults to none
/// (Keras: "imagenet"), as pretrained weights cannot be downloaded here.
struct ResNet50Options {
  /// (height, width, channels), at least 32x32; -1 for an unknown height or width (Keras'
  /// None); default 224x224x3 with the top, (None, None, 3) without.
  std::optional<std::array<std::int64_t, 3>> input_shape = std::nullopt;
  bool include_top = true;  ///< the classifier: GlobalAveragePooling2D "avg_pool" + Dense
  /// "" (random weights), or the path of a weights file (`.weights.h5`, `.keras` or a
  /// checkpoint prefix), loaded with model.load_weights once built; "imagenet" cannot be
  /// downloaded here (tf::unimplemented: save it in Python and pass its path).
  std::string weights = "";
  std::string pooling = "";     ///< without the top: "" (4-D features), "avg" or "max"
  std::int64_t classes = 1000;  ///< classifier outputs, with the top
  std::string classifier_activation = "softmax";   ///< "softmax", or "" / "linear" (logits)
  std::optional<std::string> name = std::nullopt;  ///< the model's name; default "resnet50"
};

/// ResNet50 (tf.keras.applications.ResNet50): the same 176 layers, names, weights and order as
/// Keras 3 (`layers()`), built at construction; 25,636,712 parameters by default.
///
///     tf::keras::applications::ResNet50 model({.include_top = false, .pooling = "avg"});
///     auto features = model(images).as<float, 2>();  // [N, H, W, 3] -> [N, 2048]
class ResNet50 : public Application {
 public:
  /// Builds the model for `options`.
  explicit ResNet50(const ResNet50Options& options = {})
      : Application(
            options.name.value_or("resnet50"),
            detail::keras_impl::application_input_shape(common(options), "ResNet50", 224, 32),
            options.weights) {
    detail::keras_impl::application_weights(options.weights, "ResNet50");
    Node x = zero_padding2d(0, "conv1_pad", 3);
    x = conv2d(x, "conv1_conv", 64, 7, 2, false, true);
    x = batch_normalization(x, "conv1_bn", 1.001e-5f, 0.99);
    x = activation(x, "conv1_relu", "relu");
    x = zero_padding2d(x, "pool1_pad", 1);
    x = max_pooling2d(x, "pool1_pool", 3, 2);
    x = stack(x, 64, 3, 1, "conv2");
    x = stack(x, 128, 4, 2, "conv3");
    x = stack(x, 256, 6, 2, "conv4");
    x = stack(x, 512, 3, 2, "conv5");
    if (options.include_top) {
      x = global_average_pooling2d(x, "avg_pool");
      x = dense(x, "predictions", options.classes,
                detail::keras_impl::classifier_activation(options.classifier_activation));
    } else {
      x = pool_features(x, options.pooling, "avg_pool", "max_pool");
    }
    load_weights_file();
  }

 private:
  static CommonOptions common(const ResNet50Options& o) {
    return {.input_shape = o.input_shape,
            .include_top = o.include_top,
            .weights = o.weights,
            .pooling = o.pooling,
            .classes = o.classes,
            .classifier_activation = o.classifier_activation,
            .name = o.name};
  }
  // Keras's stack_residual_blocks_v1: a block with a convolution shortcut, then identity ones.
  Node stack(Node x, std::int64_t filters, int blocks, std::int64_t stride1,
             const std::string& name) {
    x = block(x, filters, stride1, true, name + "_block1");
    for (int i = 2; i <= blocks; ++i) {
      x = block(x, filters, 1, false, name + "_block" + std::to_string(i));
    }
    return x;
  }
  // Keras's residual_block_v1, its layers in Keras's `model.layers` order (the shortcut's
  // convolution after the second ReLU: Note [Application layers]).
  Node block(Node in, std::int64_t filters, std::int64_t stride, bool conv_shortcut,
             const std::string& name) {
    Node x = conv2d(in, name + "_1_conv", filters, 1, stride, false, true);
    x = batch_normalization(x, name + "_1_bn", 1.001e-5f, 0.99);
    x = activation(x, name + "_1_relu", "relu");
    x = conv2d(x, name + "_2_conv", filters, 3, 1, true, true);
    x = batch_normalization(x, name + "_2_bn", 1.001e-5f, 0.99);
    x = activation(x, name + "_2_relu", "relu");
    Node shortcut = in;
    if (conv_shortcut) {
      shortcut = conv2d(in, name + "_0_conv", 4 * filters, 1, stride, false, true);
    }
    x = conv2d(x, name + "_3_conv", 4 * filters, 1, 1, false, true);
    if (conv_shortcut) {
      shortcut = batch_normalization(shortcut, name + "_0_bn", 1.001e-5f, 0.99);
    }
    x = batch_normalization(x, name + "_3_bn", 1.001e-5f, 0.99);
    x = add(shortcut, x, name + "_add");
    return activation(x, name + "_out", "relu");
  }
};

}  // namespace keras::applications
TAPEFLOW_END_NAMESPACE
