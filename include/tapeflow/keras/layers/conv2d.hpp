// tf.keras.layers.Conv2D: 2-D convolution over NHWC inputs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of Conv2D (Keras: strides, padding "valid"/"same", activation, ...).
struct Conv2DOptions {
  nn::Size2D strides = 1;  ///< step of the window along height and width
  /// "valid" (no padding, the default) or "same" (output = ceil(input / stride)).
  nn::PaddingArg padding = nn::Padding::valid;
  nn::Size2D dilation_rate = 1;  ///< spacing between kernel taps (atrous convolution); 1: dense
  keras::Activation activation = {};  ///< applied to the output; default linear (none)
  bool use_bias = true;               ///< whether to add a bias per filter
  /// Initial values of the kernel [kh, kw, C, filters]; default Glorot uniform (as Keras).
  initializers::Initializer kernel_initializer = initializers::GlorotUniform();
  initializers::Initializer bias_initializer = initializers::Zeros();  ///< default zeros
  std::optional<std::string> name = std::nullopt;  ///< default "conv2d", "conv2d_1", ...
};

/// A 2-D convolution layer (tf.keras.layers.Conv2D): [N, H, W, C] -> [N, H', W', filters];
/// weights "kernel" [kh, kw, C, filters] and "bias" [filters], created on the first call.
///
///     tf::keras::layers::Conv2D(32, 5, {.padding = "same", .activation = tf::nn::relu})
class Conv2D : public Layer<Conv2D> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// NHWC out.
  static constexpr int output_rank(int) { return 4; }

  /// `filters` output channels from a `kernel_size` window (one number: square); throws
  /// invalid_argument unless filters > 0.
  Conv2D(std::int64_t filters, nn::Size2D kernel_size, Conv2DOptions options = {})
      : Layer("conv2d", {.name = options.name}),
        filters_(filters),
        kernel_size_(kernel_size),
        options_(std::move(options)) {
    keras3_attribute("kernel", "_kernel");  // Keras 3's Conv2D keeps its kernel in `_kernel`
    if (filters <= 0) {
      throw invalid_argument("tf::keras::layers::Conv2D: filters must be positive, got " +
                             std::to_string(filters));
    }
  }

  /// The kernel [kh, kw, C, filters] (after build).
  [[nodiscard]] const Variable<float, 4>& kernel() const noexcept { return kernel_; }
  /// The bias [filters] (after build; never created with `use_bias = false`).
  [[nodiscard]] const Variable<float, 1>& bias() const noexcept { return bias_; }

  /// Creates the weights for NHWC inputs with input_shape[3] channels.
  void build(const Shape& input_shape) override {
    if (input_shape.rank() != 4 || input_shape[3] < 0) {
      throw invalid_argument("Conv2D '" + name() + "': cannot build for inputs of shape " +
                             input_shape.to_string() + " (NHWC with known channels)");
    }
    const std::int64_t channels = input_shape[3];
    kernel_ = add_weight<float, 4>("kernel", {kernel_size_.h, kernel_size_.w, channels, filters_},
                                   options_.kernel_initializer);
    if (options_.use_bias) {
      bias_ = add_weight<float, 1>("bias", {filters_}, options_.bias_initializer);
    }
  }

  /// "Conv2D".
  [[nodiscard]] std::string class_name() const override { return "Conv2D"; }

  /// activation(conv2d(x, kernel) + bias) on NHWC `x`; throws invalid_argument (from
  /// `tf::nn::conv2d`) when x's channels differ from those the layer was built for.
  Tensor<float, 4> call(const Tensor<float, 4>& x) {
    auto y = nn::conv2d(x, kernel_,
                        {.strides = options_.strides,
                         .padding = options_.padding,
                         .dilations = options_.dilation_rate});
    if (options_.use_bias) {
      y = y + bias_;
    }
    return options_.activation(y);
  }

 private:
  std::int64_t filters_;
  nn::Size2D kernel_size_;
  Conv2DOptions options_;
  Variable<float, 4> kernel_;
  Variable<float, 1> bias_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
