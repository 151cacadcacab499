// tf.keras.layers.Add and Concatenate: layers that merge several tensors (ResNet's shortcut,
// MobileNetV2's residual, Inception-style branches).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/concat.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Sums its inputs elementwise (tf.keras.layers.Add, with broadcasting): `add({a, b, c})` is
/// `(a + b) + c`, in Keras' order. Called with a list of tensors (`add(std::vector{a, b})`)
/// or with two tensors (`add(a, b)`).
///
///     auto y = tf::keras::layers::Add()(shortcut, x);  // ResNet's residual connection
class Add : public Layer<Add> {
 public:
  /// Takes the common layer options (default name "add", "add_1", ...).
  explicit Add(LayerOptions options = {}) : Layer("add", std::move(options)) {}

  /// "Add".
  [[nodiscard]] std::string class_name() const override { return "Add"; }
  /// The sum of `inputs` (at least one; same dtype and rank, shapes that broadcast); throws
  /// invalid_argument for an empty list or shapes that do not broadcast.
  template <class T, std::size_t R>
  Tensor<T, R> call(const std::vector<Tensor<T, R>>& inputs) {
    if (inputs.empty()) {
      throw invalid_argument("Add '" + name() + "': needs at least one input");
    }
    Tensor<T, R> sum = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      sum = sum + inputs[i];
    }
    return sum;
  }
  /// `a + b`.
  template <class T, std::size_t R>
  Tensor<T, R> call(const Tensor<T, R>& a, const Tensor<T, R>& b) {
    return a + b;
  }
};

/// Keyword arguments of Concatenate.
struct ConcatenateOptions {
  std::optional<std::string> name = std::nullopt;  ///< default "concatenate", ...
};

/// Joins its inputs along `axis` (tf.keras.layers.Concatenate, default the last axis;
/// TensorFlow's ConcatV2). Called with a list of tensors or with two tensors.
///
///     auto y = tf::keras::layers::Concatenate()(std::vector{a, b});  // [N, H, W, Ca + Cb]
class Concatenate : public Layer<Concatenate> {
 public:
  /// Joins along `axis` (negative counts from the end).
  explicit Concatenate(int axis = -1, ConcatenateOptions options = {})
      : Layer("concatenate", {.name = options.name}), axis_(axis) {}

  /// The axis joined along.
  [[nodiscard]] int axis() const noexcept { return axis_; }
  /// "Concatenate".
  [[nodiscard]] std::string class_name() const override { return "Concatenate"; }
  /// `tf::concat(inputs, axis)`; throws invalid_argument (from `tf::concat`) for an empty list,
  /// a bad axis or shapes that differ off the axis.
  template <class T, std::size_t R>
  Tensor<T, R> call(const std::vector<Tensor<T, R>>& inputs) {
    return concat(inputs, axis_);
  }
  /// `tf::concat({a, b}, axis)`.
  template <class T, std::size_t R>
  Tensor<T, R> call(const Tensor<T, R>& a, const Tensor<T, R>& b) {
    return concat(std::vector<Tensor<T, R>>{a, b}, axis_);
  }

 private:
  int axis_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
