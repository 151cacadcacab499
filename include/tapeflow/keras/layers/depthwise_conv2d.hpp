// tf.keras.layers.DepthwiseConv2D: a depthwise 2-D convolution over NHWC inputs (MobileNet's
// building block).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of DepthwiseConv2D (Keras' names and defaults).
struct DepthwiseConv2DOptions {
  nn::Size2D strides = 1;  ///< step of the window along height and width
  /// "valid" (no padding, the default) or "same" (output = ceil(input / stride)).
  nn::PaddingArg padding = nn::Padding::valid;
  std::int64_t depth_multiplier = 1;  ///< filters per input channel
  nn::Size2D dilation_rate = 1;       ///< spacing between kernel taps; 1: dense
  keras::Activation activation = {};  ///< applied to the output; default linear (none)
  bool use_bias = true;               ///< whether to add a bias per output channel
  /// Initial values of the kernel [kh, kw, C, depth_multiplier]; Glorot uniform (as Keras).
  initializers::Initializer depthwise_initializer = initializers::GlorotUniform();
  initializers::Initializer bias_initializer = initializers::Zeros();  ///< default zeros
  std::optional<std::string> name = std::nullopt;  ///< default "depthwise_conv2d", ...
};

/// A depthwise 2-D convolution layer (tf.keras.layers.DepthwiseConv2D, TensorFlow's
/// DepthwiseConv2dNative): [N, H, W, C] -> [N, H', W', C * depth_multiplier], each input
/// channel convolved with its own filters. Weights, created on the first call:
/// "depthwise_kernel" [kh, kw, C, depth_multiplier] (Keras 3 tracks it as "kernel", so
/// checkpoints use that name in the Keras 3 layout) and "bias" [C * depth_multiplier].
///
///     tf::keras::layers::DepthwiseConv2D(3, {.strides = 2, .padding = "same",
///                                            .use_bias = false})  // MobileNetV2
class DepthwiseConv2D : public Layer<DepthwiseConv2D> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// NHWC out.
  static constexpr int output_rank(int) { return 4; }

  /// A `kernel_size` window (one number: square); throws invalid_argument unless
  /// depth_multiplier > 0.
  explicit DepthwiseConv2D(nn::Size2D kernel_size, DepthwiseConv2DOptions options = {})
      : Layer("depthwise_conv2d", {.name = options.name}),
        kernel_size_(kernel_size),
        options_(std::move(options)) {
    keras3_attribute("depthwise_kernel", "kernel");  // Keras 3 names it `kernel`
    if (options_.depth_multiplier <= 0) {
      throw invalid_argument(
          "tf::keras::layers::DepthwiseConv2D: depth_multiplier must be positive, got " +
          std::to_string(options_.depth_multiplier));
    }
  }

  /// The kernel [kh, kw, C, depth_multiplier] (after build).
  [[nodiscard]] const Variable<float, 4>& depthwise_kernel() const noexcept { return kernel_; }
  /// The bias [C * depth_multiplier] (after build; never created with `use_bias = false`).
  [[nodiscard]] const Variable<float, 1>& bias() const noexcept { return bias_; }

  /// Creates the weights for NHWC inputs with input_shape[3] channels.
  void build(const Shape& input_shape) override {
    if (input_shape.rank() != 4 || input_shape[3] < 0) {
      throw invalid_argument("DepthwiseConv2D '" + name() + "': cannot build for inputs of shape " +
                             input_shape.to_string() + " (NHWC with known channels)");
    }
    const std::int64_t channels = input_shape[3];
    const std::int64_t mult = options_.depth_multiplier;
    kernel_ =
        add_weight<float, 4>("depthwise_kernel", {kernel_size_.h, kernel_size_.w, channels, mult},
                             options_.depthwise_initializer);
    if (options_.use_bias) {
      bias_ = add_weight<float, 1>("bias", {channels * mult}, options_.bias_initializer);
    }
  }

  /// "DepthwiseConv2D".
  [[nodiscard]] std::string class_name() const override { return "DepthwiseConv2D"; }

  /// activation(depthwise_conv2d(x, kernel) + bias) on NHWC `x`; throws invalid_argument
  /// (from `tf::nn::depthwise_conv2d`) when x's channels differ from those built for.
  Tensor<float, 4> call(const Tensor<float, 4>& x) {
    auto y = nn::depthwise_conv2d(x, kernel_,
                                  {.strides = options_.strides,
                                   .padding = options_.padding,
                                   .dilations = options_.dilation_rate});
    if (options_.use_bias) {
      y = y + bias_;
    }
    return options_.activation(y);
  }

 private:
  nn::Size2D kernel_size_;
  DepthwiseConv2DOptions options_;
  Variable<float, 4> kernel_;
  Variable<float, 1> bias_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
