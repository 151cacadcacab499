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
  std::optional<nn::Size2D> strides = std::nullopt;
  nn::PaddingArg padding = nn::Padding::valid;
  std::optional<std::string> name = std::nullopt;
};

/// Max over pool_size windows (tf.keras.layers.MaxPooling2D; default 2x2, stride 2).
class MaxPooling2D : public Layer<MaxPooling2D> {
 public:
  static constexpr int input_rank = 4;
  static constexpr int min_input_rank = 4;
  static constexpr int output_rank(int) { return 4; }

  explicit MaxPooling2D(nn::Size2D pool_size = 2, Pooling2DOptions options = {})
      : Layer("max_pooling2d", {.name = options.name}), pool_(pool_size), options_(options) {}

  [[nodiscard]] std::string class_name() const override { return "MaxPooling2D"; }
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
  static constexpr int input_rank = 4;
  static constexpr int min_input_rank = 4;
  static constexpr int output_rank(int) { return 4; }

  explicit AveragePooling2D(nn::Size2D pool_size = 2, Pooling2DOptions options = {})
      : Layer("average_pooling2d", {.name = options.name}), pool_(pool_size), options_(options) {}

  [[nodiscard]] std::string class_name() const override { return "AveragePooling2D"; }
  Tensor<float, 4> call(const Tensor<float, 4>& x) {
    return nn::avg_pool2d(x, pool_, options_.strides.value_or(pool_), options_.padding);
  }

 private:
  nn::Size2D pool_;
  Pooling2DOptions options_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
