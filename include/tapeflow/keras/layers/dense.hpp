// tf.keras.layers.Dense: y = activation(x @ kernel + bias) on the last axis.
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
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of Dense.
struct DenseOptions {
  keras::Activation activation = {};  ///< applied to the output; default linear (none)
  bool use_bias = true;               ///< whether to add a bias vector
  /// Initial values of the kernel [in, units]; default Glorot uniform (as Keras).
  initializers::Initializer kernel_initializer = initializers::GlorotUniform();
  initializers::Initializer bias_initializer = initializers::Zeros();  ///< default zeros
  std::optional<std::string> name = std::nullopt;  ///< default "dense", "dense_1", ...
};

/// A densely connected layer (tf.keras.layers.Dense). Input [..., in] -> [..., units]; the
/// kernel [in, units] and bias [units] are created on the first call (weights "kernel", "bias").
///
///     tf::keras::layers::Dense dense(10, {.activation = tf::nn::softmax});
///     auto y = dense(x);  // x: Tensor<float, 2> [N, in] -> [N, 10]
class Dense : public Layer<Dense> {
 public:
  /// Inputs need rank >= 2 ([batch, ..., in]; Sequential checks it at compile time).
  static constexpr int min_input_rank = 2;
  /// The output has the input's rank (only the last axis changes).
  static constexpr int output_rank(int in) { return in; }

  /// A layer with `units` outputs per example; throws invalid_argument unless units > 0.
  explicit Dense(std::int64_t units, DenseOptions options = {})
      : Layer("dense", {.name = options.name}), units_(units), options_(std::move(options)) {
    keras3_attribute("kernel", "_kernel");  // Keras 3's Dense keeps its kernel in `_kernel`
    if (units <= 0) {
      throw invalid_argument("tf::keras::layers::Dense: units must be positive, got " +
                             std::to_string(units));
    }
  }

  /// Size of the output's last axis.
  [[nodiscard]] std::int64_t units() const noexcept { return units_; }
  /// The kernel [in, units] (after build).
  [[nodiscard]] const Variable<float, 2>& kernel() const noexcept { return kernel_; }
  /// The bias [units] (after build; never created with `use_bias = false`).
  [[nodiscard]] const Variable<float, 1>& bias() const noexcept { return bias_; }

  /// Creates the weights for inputs whose last axis is input_shape[-1].
  void build(const Shape& input_shape) override {
    if (input_shape.rank() < 2 || input_shape[input_shape.rank() - 1] < 0) {
      throw invalid_argument("Dense '" + name() + "': cannot build for inputs of shape " +
                             input_shape.to_string() + " (the last axis must be known)");
    }
    const std::int64_t in = input_shape[input_shape.rank() - 1];
    kernel_ = add_weight<float, 2>("kernel", {in, units_}, options_.kernel_initializer);
    if (options_.use_bias) {
      bias_ = add_weight<float, 1>("bias", {units_}, options_.bias_initializer);
    }
  }

  /// "Dense".
  [[nodiscard]] std::string class_name() const override { return "Dense"; }

  /// activation(x @ kernel + bias) on the last axis: [..., in] -> [..., units]. Throws
  /// invalid_argument when x's last axis is not the `in` the layer was built for.
  template <std::size_t R>
  Tensor<float, R> call(const Tensor<float, R>& x) {
    static_assert(R >= 2,
                  "tf::keras::layers::Dense: input must have rank >= 2 ([batch, features])");
    const std::int64_t in = x.dims()[R - 1];
    if (kernel_.dims()[0] != in) {
      throw invalid_argument("Dense '" + name() + "': input of shape " + x.shape().to_string() +
                             " has last axis " + std::to_string(in) +
                             " but the layer was built for " + std::to_string(kernel_.dims()[0]));
    }
    if constexpr (R == 2) {
      return options_.activation(affine(x));
    } else {
      auto flat = reshape(x, std::array<std::int64_t, 2>{-1, in});
      auto out_dims = x.dims();
      out_dims[R - 1] = units_;
      return options_.activation(reshape(affine(flat), out_dims));
    }
  }

 private:
  Tensor<float, 2> affine(const Tensor<float, 2>& x) const {
    auto y = matmul(x, kernel_);
    return options_.use_bias ? Tensor<float, 2>(y + bias_) : y;
  }

  std::int64_t units_;
  DenseOptions options_;
  Variable<float, 2> kernel_;
  Variable<float, 1> bias_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
