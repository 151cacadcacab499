// tf.keras.layers.Flatten and tf.keras.layers.Reshape.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/reshape.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Flattens every axis but the batch axis: [N, d1, d2, ...] -> [N, d1 * d2 * ...]
/// (tf.keras.layers.Flatten). Free: the buffer is shared.
class Flatten : public Layer<Flatten> {
 public:
  static constexpr int min_input_rank = 1;  ///< needs the batch axis
  /// [N, features] out.
  static constexpr int output_rank(int) { return 2; }

  /// Takes the common layer options (default name "flatten", "flatten_1", ...).
  explicit Flatten(LayerOptions options = {}) : Layer("flatten", options) {}

  /// "Flatten".
  [[nodiscard]] std::string class_name() const override { return "Flatten"; }
  /// `x` [N, d1, d2, ...] (any dtype) reshaped to [N, d1 * d2 * ...].
  template <class T, std::size_t R>
  Tensor<T, 2> call(const Tensor<T, R>& x) {
    static_assert(R >= 1, "tf::keras::layers::Flatten: input must have a batch axis");
    const std::int64_t n = x.dims()[0];
    return reshape(x, std::array<std::int64_t, 2>{n, n == 0 ? 0 : x.num_elements() / n});
  }
};

/// Reshapes every example to `target_shape` (tf.keras.layers.Reshape): [N, ...] ->
/// [N, target_shape...]; one entry may be -1.
///
///     tf::keras::layers::Reshape<3>({28, 28, 1})  // [N, 784] -> [N, 28, 28, 1]
template <std::size_t N>
class Reshape : public Layer<Reshape<N>> {
 public:
  static constexpr int min_input_rank = 1;  ///< needs the batch axis
  /// The batch axis plus the N axes of `target_shape`.
  static constexpr int output_rank(int) { return int(N) + 1; }

  /// Reshapes examples to `target_shape` (per example, without the batch axis; one entry may
  /// be -1); default name "reshape", "reshape_1", ...
  explicit Reshape(std::array<std::int64_t, N> target_shape, LayerOptions options = {})
      : Layer<Reshape<N>>("reshape", options), target_(target_shape) {}

  /// "Reshape".
  [[nodiscard]] std::string class_name() const override { return "Reshape"; }
  /// `x` [N, ...] (any dtype) reshaped to [N, target_shape...]; throws invalid_argument (from
  /// `tf::reshape`) when the element counts do not match.
  template <class T, std::size_t R>
  Tensor<T, N + 1> call(const Tensor<T, R>& x) {
    std::array<std::int64_t, N + 1> dims{};
    dims[0] = x.dims()[0];
    for (std::size_t i = 0; i < N; ++i) {
      dims[i + 1] = target_[i];
    }
    return reshape(x, dims);
  }

 private:
  std::array<std::int64_t, N> target_;
};
/// Deduces `Reshape<N>` from a braced target shape of N entries: `Reshape({28, 28, 1})`.
template <std::size_t N>
Reshape(const std::int64_t (&)[N], LayerOptions = {}) -> Reshape<N>;

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
