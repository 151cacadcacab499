// tf.keras.layers.MaxPooling2D and AveragePooling2D (NHWC).
#pragma once

#include <optional>
#include <string>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/nn/pooling.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of the pooling layers; strides default to pool_size (as in Keras).
struct Pooling2DOptions {
  std::optional<nn::Size2D> strides = std::nullopt;  ///< window step; default pool_size
  /// "valid" (no padding, the default) or "same" (output = ceil(input / stride)).
  nn::PaddingArg padding = nn::Padding::valid;
  /// Default "max_pooling2d" / "average_pooling2d", uniquified ("max_pooling2d_1", ...).
  std::optional<std::string> name = std::nullopt;
};

/// Max over pool_size windows (tf.keras.layers.MaxPooling2D; default 2x2, stride 2).
class MaxPooling2D : public Layer<MaxPooling2D> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// NHWC out.
  static constexpr int output_rank(int) { return 4; }

  /// Pools `pool_size` windows (one number: square); default name "max_pooling2d", ...
  explicit MaxPooling2D(nn::Size2D pool_size = 2, Pooling2DOptions options = {})
      : Layer("max_pooling2d", {.name = options.name}), pool_(pool_size), options_(options) {}

  /// "MaxPooling2D".
  [[nodiscard]] std::string class_name() const override { return "MaxPooling2D"; }
  /// `tf::nn::max_pool2d` of NHWC `x` with the layer's window, strides and padding.
  Tensor<float, 4> call(const Tensor<float, 4>& x) {
    return nn::max_pool2d(x, pool_, options_.strides.value_or(pool_), options_.padding);
  }

 private:
  nn::Size2D pool_;
  Pooling2DOptions options_;
};

/// Mean over pool_size windows (tf.keras.layers.AveragePooling2D).
class AveragePooling2D : public Layer<AveragePooling2D> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// NHWC out.
  static constexpr int output_rank(int) { return 4; }

  /// Pools `pool_size` windows (one number: square); default name "average_pooling2d", ...
  explicit AveragePooling2D(nn::Size2D pool_size = 2, Pooling2DOptions options = {})
      : Layer("average_pooling2d", {.name = options.name}), pool_(pool_size), options_(options) {}

  /// "AveragePooling2D".
  [[nodiscard]] std::string class_name() const override { return "AveragePooling2D"; }
  /// `tf::nn::avg_pool2d` of NHWC `x` with the layer's window, strides and padding.
  Tensor<float, 4> call(const Tensor<float, 4>& x) {
    return nn::avg_pool2d(x, pool_, options_.strides.value_or(pool_), options_.padding);
  }

 private:
  nn::Size2D pool_;
  Pooling2DOptions options_;
};

/// Keras' shorter name for MaxPooling2D (tf.keras.layers.MaxPool2D).
using MaxPool2D = MaxPooling2D;
/// Keras' shorter name for AveragePooling2D (tf.keras.layers.AvgPool2D).
using AvgPool2D = AveragePooling2D;

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
