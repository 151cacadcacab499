// tf.keras.layers.Activation: an activation function as a layer.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/layer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Applies an activation function (tf.keras.layers.Activation): a Keras name ("relu",
/// "relu6", "softmax", ...), a function such as `tf::nn::relu`, or any callable on
/// `Tensor<float, 2>` (see `tf::keras::Activation`). Softmax normalizes the last axis.
///
///     tf::keras::layers::Activation("softmax")  // ResNet50's and VGG16's classifier output
class Activation : public Layer<Activation> {
 public:
  /// Any rank >= 1 (the function sees [-1, last axis]).
  static constexpr int min_input_rank = 1;
  /// The output has the input's shape.
  static constexpr int output_rank(int in) { return in; }

  /// Applies `activation`; throws invalid_argument (from `tf::keras::Activation`) for an
  /// unknown name. Default name "activation", "activation_1", ...
  explicit Activation(keras::Activation activation, LayerOptions options = {})
      : Layer("activation", std::move(options)), activation_(std::move(activation)) {}
  /// A Keras name: `Activation("relu")`.
  explicit Activation(const char* name, LayerOptions options = {})
      : Activation(keras::Activation(name), std::move(options)) {}

  /// "Activation".
  [[nodiscard]] std::string class_name() const override { return "Activation"; }
  /// The function applied to `x` (float, rank >= 1; same shape out).
  template <std::size_t R>
  Tensor<float, R> call(const Tensor<float, R>& x) {
    return activation_(x);
  }

 private:
  keras::Activation activation_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
