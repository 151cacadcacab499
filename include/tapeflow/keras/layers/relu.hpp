// tf.keras.layers.ReLU: max_value, negative_slope and threshold, as Keras 3 computes them.
#pragma once

#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/relu6.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of ReLU (Keras' names and defaults).
struct ReLUOptions {
  /// The largest output (Keras: `max_value`); none by default. 6 (without a threshold) runs
  /// TensorFlow's Relu6 op, as Keras does.
  std::optional<float> max_value = std::nullopt;
  float negative_slope = 0.0f;  ///< slope below the threshold (leaky ReLU)
  float threshold = 0.0f;       ///< inputs up to this value are damped (not passed through)
  std::optional<std::string> name = std::nullopt;  ///< default "re_lu", "re_lu_1", ...
};

/// The rectified linear unit (tf.keras.layers.ReLU): `x` where x > threshold, else
/// `negative_slope * (x - threshold)`, capped at `max_value`. With the defaults it is
/// `tf::nn::relu`; `ReLU({.max_value = 6})` is MobileNet's `tf::nn::relu6`.
///
/// Computed as Keras 3's `activations.relu` is, with the same ops: Relu (or Relu6, or a
/// Greater/Select for a threshold), Minimum/Maximum for `max_value`, and `- negative_slope *
/// relu(threshold - x)`, so the values and the exported graph are Keras'.
///
///     tf::keras::layers::ReLU relu6({.max_value = 6.0f});
class ReLU : public Layer<ReLU> {
 public:
  /// Any rank is accepted.
  static constexpr int min_input_rank = 0;
  /// The output has the input's shape.
  static constexpr int output_rank(int in) { return in; }

  /// Throws invalid_argument for a negative max_value or negative_slope (as Keras).
  explicit ReLU(ReLUOptions options = {})
      : Layer("re_lu", {.name = options.name}), options_(std::move(options)) {
    if (options_.max_value && !(*options_.max_value >= 0.0f)) {
      throw invalid_argument("tf::keras::layers::ReLU: max_value must be >= 0, got " +
                             std::to_string(*options_.max_value));
    }
    if (!(options_.negative_slope >= 0.0f)) {
      throw invalid_argument("tf::keras::layers::ReLU: negative_slope must be >= 0, got " +
                             std::to_string(options_.negative_slope));
    }
  }

  /// "ReLU".
  [[nodiscard]] std::string class_name() const override { return "ReLU"; }

  /// The activation of `x` (float, any rank).
  template <std::size_t R>
  Tensor<float, R> call(const Tensor<float, R>& x) {
    const float slope = options_.negative_slope;
    const float threshold = options_.threshold;
    bool clip = options_.max_value.has_value();
    Tensor<float, R> y;
    if (threshold != 0.0f) {
      y = where(greater(x, Tensor<float, 0>(threshold)), x, Tensor<float, 0>(0.0f));
    } else if (clip && *options_.max_value == 6.0f) {
      y = nn::relu6(x);
      clip = false;
    } else {
      y = nn::relu(x);
    }
    if (clip) {
      y = minimum(maximum(y, Tensor<float, 0>(0.0f)), Tensor<float, 0>(*options_.max_value));
    }
    if (slope != 0.0f) {
      const auto below =
          threshold != 0.0f ? nn::relu(-x + Tensor<float, 0>(threshold)) : nn::relu(-x);
      y = y - Tensor<float, 0>(slope) * below;
    }
    return y;
  }

 private:
  ReLUOptions options_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
