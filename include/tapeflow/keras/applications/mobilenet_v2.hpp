// tf.keras.applications.MobileNetV2 (Sandler et al. 2018), layer for layer as Keras 3 builds it.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/applications/application.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::applications {

/// Keras's arguments of `MobileNetV2(...)` (`input_tensor` aside). `weights` defaults to none
/// (Keras: "imagenet"), as pretrained weights cannot be downloaded here.
struct MobileNetV2Options {
  /// (height, width, channels), at least 32x32; -1 for an unknown height or width (Keras'
  /// None); default 224x224x3 with the top, (None, None, 3) without.
  std::optional<std::array<std::int64_t, 3>> input_shape = std::nullopt;
  /// Width multiplier: the filters of every layer scale by it (rounded to multiples of 8).
  /// Pretrained weights exist for 0.35, 0.5, 0.75, 1.0, 1.3 and 1.4.
  double alpha = 1.0;
  bool include_top = true;  ///< the classifier: GlobalAveragePooling2D + Dense "predictions"
  /// "" (random weights), or the path of a weights file (`.weights.h5`, `.keras` or a
  /// checkpoint prefix), loaded with model.load_weights once built; "imagenet" cannot be
  /// downloaded here (tf::unimplemented: save it in Python and pass its path).
  std::string weights = "";
  std::string pooling = "";     ///< without the top: "" (4-D features), "avg" or "max"
  std::int64_t classes = 1000;  ///< classifier outputs, with the top
  std::string classifier_activation = "softmax";  ///< "softmax", or "" / "linear" (logits)
  /// The model's name; default Keras's "mobilenetv2_<alpha>_<rows>".
  std::optional<std::string> name = std::nullopt;
};

/// MobileNetV2 (tf.keras.applications.MobileNetV2): the same 155 layers, names, weights and
/// order as Keras 3 (`layers()`), built at construction; 3,538,984 parameters by default.
///
///     tf::keras::applications::MobileNetV2 model({.input_shape = {{96, 96, 3}}, .alpha = 0.35});
///     auto probs = model(images).as<float, 2>();  // [N, 96, 96, 3] in [-1, 1] -> [N, 1000]
///
/// Throws invalid_argument for Keras's argument errors and unimplemented for `weights="imagenet"`
/// (see MobileNetV2Options).
class MobileNetV2 : public Application {
 public:
  /// Builds the model for `options`.
  explicit MobileNetV2(const MobileNetV2Options& options = {})
      : Application(model_name(options), input_shape_for(options), options.weights) {
    detail::keras_impl::application_weights(options.weights, "MobileNetV2");
    const double alpha = options.alpha;
    Node x = conv2d(0, "Conv1", make_divisible(32 * alpha), 3, 2, true, false);
    x = batch_normalization(x, "bn_Conv1", 1e-3f, 0.999);
    x = relu(x, "Conv1_relu", 6.0f);
    struct Block {
      std::int64_t filters, stride, expansion;
    };
    constexpr std::array<Block, 17> blocks{{{16, 1, 1},
                                            {24, 2, 6},
                                            {24, 1, 6},
                                            {32, 2, 6},
                                            {32, 1, 6},
                                            {32, 1, 6},
                                            {64, 2, 6},
                                            {64, 1, 6},
                                            {64, 1, 6},
                                            {64, 1, 6},
                                            {96, 1, 6},
                                            {96, 1, 6},
                                            {96, 1, 6},
                                            {160, 2, 6},
                                            {160, 1, 6},
                                            {160, 1, 6},
                                            {320, 1, 6}}};
    for (std::size_t id = 0; id < blocks.size(); ++id) {
      x = inverted_res_block(x, blocks[id].expansion, blocks[id].stride, alpha, blocks[id].filters,
                             int(id));
    }
    const std::int64_t last = alpha > 1.0 ? make_divisible(1280 * alpha) : 1280;
    x = conv2d(x, "Conv_1", last, 1, 1, false, false);
    x = batch_normalization(x, "Conv_1_bn", 1e-3f, 0.999);
    x = relu(x, "out_relu", 6.0f);
    if (options.include_top) {
      x = global_average_pooling2d(x);
      x = dense(x, "predictions", options.classes,
                detail::keras_impl::classifier_activation(options.classifier_activation));
    } else {
      x = pool_features(x, options.pooling);
    }
    load_weights_file();
  }

  /// Keras's `_make_divisible(v, 8)`: `v` rounded to the nearest multiple of 8 (at least 8),
  /// up when rounding down would lose more than 10%.
  static std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
    std::int64_t n = std::max<std::int64_t>(
        divisor, static_cast<std::int64_t>(v + double(divisor) / 2) / divisor * divisor);
    if (double(n) < 0.9 * v) {
      n += divisor;
    }
    return n;
  }

 private:
  static CommonOptions common(const MobileNetV2Options& o) {
    return {.input_shape = o.input_shape,
            .include_top = o.include_top,
            .weights = o.weights,
            .pooling = o.pooling,
            .classes = o.classes,
            .classifier_activation = o.classifier_activation,
            .name = o.name};
  }
  // Keras's default_size: the input's rows when square and one of the pretrained sizes.
  static std::int64_t default_size(const MobileNetV2Options& o) {
    if (o.input_shape) {
      const auto r = (*o.input_shape)[0];
      if (r == (*o.input_shape)[1] && (r == 96 || r == 128 || r == 160 || r == 192 || r == 224)) {
        return r;
      }
    }
    return 224;
  }
  static std::array<std::int64_t, 3> input_shape_for(const MobileNetV2Options& o) {
    if (!(o.alpha > 0)) {
      throw invalid_argument(
          "tf::keras::applications::MobileNetV2: alpha must be positive. "
          "Received: alpha=" +
          std::to_string(o.alpha));
    }
    if (o.weights == "imagenet") {
      bool known = false;
      for (double a : {0.35, 0.50, 0.75, 1.0, 1.3, 1.4}) {
        known = known || o.alpha == a;
      }
      if (!known) {
        throw invalid_argument(
            "tf::keras::applications::MobileNetV2: if imagenet weights are being loaded, alpha "
            "must be one of 0.35, 0.50, 0.75, 1.0, 1.3 or 1.4 only; Received: alpha=" +
            std::to_string(o.alpha));
      }
    }
    return detail::keras_impl::application_input_shape(common(o), "MobileNetV2", default_size(o),
                                                       32);
  }
  static std::string model_name(const MobileNetV2Options& o) {
    if (o.name) {
      return *o.name;
    }
    const auto shape = input_shape_for(o);
    std::int64_t rows = shape[0];
    if (o.weights == "imagenet" &&
        (rows != shape[1] ||
         !(rows == 96 || rows == 128 || rows == 160 || rows == 192 || rows == 224))) {
      rows = 224;
    }
    char a[32];
    std::snprintf(a, sizeof a, "%.2f", o.alpha);
    return "mobilenetv2_" + std::string(a) + "_" +
           (rows < 0 ? std::string("None") : std::to_string(rows));
  }

  // Keras's _inverted_res_block; correct_pad pads ((0, 1), (0, 1)) for unknown (None) sizes.
  Node inverted_res_block(Node inputs, std::int64_t expansion, std::int64_t stride, double alpha,
                          std::int64_t filters, int block_id) {
    const std::int64_t in_channels = shape_of(inputs)[3];
    const std::int64_t pointwise_filters =
        make_divisible(double(static_cast<std::int64_t>(double(filters) * alpha)));
    Node x = inputs;
    std::string prefix = "block_" + std::to_string(block_id) + "_";
    if (block_id != 0) {
      x = conv2d(x, prefix + "expand", expansion * in_channels, 1, 1, true, false);
      x = batch_normalization(x, prefix + "expand_BN", 1e-3f, 0.999);
      x = relu(x, prefix + "expand_relu", 6.0f);
    } else {
      prefix = "expanded_conv_";
    }
    if (stride == 2) {
      // imagenet_utils.correct_pad(x, 3)
      const auto& s = shape_of(x);
      const std::int64_t adjust_h = s[1] >= 0 ? 1 - s[1] % 2 : 1;
      const std::int64_t adjust_w = s[2] >= 0 ? 1 - s[2] % 2 : 1;
      x = zero_padding2d(x, prefix + "pad",
                         layers::Padding2D({1 - adjust_h, 1}, {1 - adjust_w, 1}));
    }
    x = depthwise_conv2d(x, prefix + "depthwise", 3, stride, stride == 1, false);
    x = batch_normalization(x, prefix + "depthwise_BN", 1e-3f, 0.999);
    x = relu(x, prefix + "depthwise_relu", 6.0f);
    x = conv2d(x, prefix + "project", pointwise_filters, 1, 1, true, false);
    x = batch_normalization(x, prefix + "project_BN", 1e-3f, 0.999);
    if (in_channels == pointwise_filters && stride == 1) {
      return add(inputs, x, prefix + "add");
    }
    return x;
  }
};

}  // namespace keras::applications
TAPEFLOW_END_NAMESPACE
