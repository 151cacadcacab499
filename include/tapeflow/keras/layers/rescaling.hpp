// tf.keras.layers.Rescaling: x * scale + offset (image preprocessing).
#pragma once

#include <optional>
#include <string>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of Rescaling.
struct RescalingOptions {
  float offset = 0.0f;                             ///< added after scaling
  std::optional<std::string> name = std::nullopt;  ///< default "rescaling", "rescaling_1", ...
};

/// Rescales inputs to float: `cast<float>(x) * scale + offset` (tf.keras.layers.Rescaling,
/// Keras 3's computation). A scalar scale and offset (Keras also takes per-channel lists).
///
///     tf::keras::layers::Rescaling(1.0f / 127.5f, {.offset = -1.0f})  // [0, 255] -> [-1, 1]
///     tf::keras::layers::Rescaling(1.0f / 255)                        // uint8 images too
class Rescaling : public Layer<Rescaling> {
 public:
  /// Any rank is accepted.
  static constexpr int min_input_rank = 0;
  /// The output has the input's shape.
  static constexpr int output_rank(int in) { return in; }

  /// Multiplies by `scale`, then adds `options.offset`.
  explicit Rescaling(float scale, RescalingOptions options = {})
      : Layer("rescaling", {.name = options.name}), scale_(scale), offset_(options.offset) {}

  /// The scale.
  [[nodiscard]] float scale() const noexcept { return scale_; }
  /// The offset.
  [[nodiscard]] float offset() const noexcept { return offset_; }
  /// "Rescaling".
  [[nodiscard]] std::string class_name() const override { return "Rescaling"; }
  /// `x` (any numeric dtype, cast to float first) times scale plus offset.
  template <class T, std::size_t R>
  Tensor<float, R> call(const Tensor<T, R>& x) {
    if constexpr (std::same_as<T, float>) {
      return x * Tensor<float, 0>(scale_) + Tensor<float, 0>(offset_);
    } else {
      return cast<float>(x) * Tensor<float, 0>(scale_) + Tensor<float, 0>(offset_);
    }
  }

 private:
  float scale_;
  float offset_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
