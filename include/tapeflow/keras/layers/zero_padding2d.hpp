// tf.keras.layers.ZeroPadding2D (NHWC).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/pad.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Rows and columns of zeros ZeroPadding2D adds: Keras' `padding` argument. One number pads
/// all four sides; `{h, w}` pads h rows above and below and w columns left and right;
/// `{{top, bottom}, {left, right}}` gives each side.
struct Padding2D {
  std::int64_t top = 1;     ///< rows of zeros above
  std::int64_t bottom = 1;  ///< rows of zeros below
  std::int64_t left = 1;    ///< columns of zeros on the left
  std::int64_t right = 1;   ///< columns of zeros on the right
  /// Keras' default: one on every side.
  constexpr Padding2D() noexcept = default;
  /// `all` on every side.
  constexpr Padding2D(std::int64_t all) noexcept  // NOLINT(google-explicit-constructor)
      : top(all), bottom(all), left(all), right(all) {}
  /// `h` above and below, `w` left and right (Keras: `padding=(h, w)`).
  constexpr Padding2D(std::int64_t h, std::int64_t w) noexcept
      : top(h), bottom(h), left(w), right(w) {}
  /// Each side (Keras: `padding=((top, bottom), (left, right))`).
  constexpr Padding2D(std::array<std::int64_t, 2> rows, std::array<std::int64_t, 2> cols) noexcept
      : top(rows[0]), bottom(rows[1]), left(cols[0]), right(cols[1]) {}
};

/// Surrounds each image with zeros (tf.keras.layers.ZeroPadding2D, TensorFlow's Pad):
/// [N, H, W, C] -> [N, top + H + bottom, left + W + right, C].
///
///     tf::keras::layers::ZeroPadding2D(3)                    // ResNet50's stem
///     tf::keras::layers::ZeroPadding2D({{0, 1}, {0, 1}})     // MobileNetV2's correct_pad
class ZeroPadding2D : public Layer<ZeroPadding2D> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// NHWC out.
  static constexpr int output_rank(int) { return 4; }

  /// Pads by `padding` (default one on each side); throws invalid_argument for a negative
  /// amount. Default name "zero_padding2d", "zero_padding2d_1", ...
  // By reference: GCC 12 at -O2 -march=native (AVX-512) turned a by-value Padding2D(2, 0) into
  // 2 on every side here (ASan/UBSan clean; other flags right).
  explicit ZeroPadding2D(const Padding2D& padding = {}, LayerOptions options = {})
      : Layer("zero_padding2d", std::move(options)), padding_(padding) {
    if (padding.top < 0 || padding.bottom < 0 || padding.left < 0 || padding.right < 0) {
      throw invalid_argument("tf::keras::layers::ZeroPadding2D: padding must not be negative");
    }
  }

  /// The padding on each side.
  [[nodiscard]] const Padding2D& padding() const noexcept { return padding_; }
  /// "ZeroPadding2D".
  [[nodiscard]] std::string class_name() const override { return "ZeroPadding2D"; }
  /// `tf::pad(x, {{0, 0}, {top, bottom}, {left, right}, {0, 0}})` of NHWC `x` (any dtype).
  template <class T>
  Tensor<T, 4> call(const Tensor<T, 4>& x) {
    return pad(x,
               {{0, 0}, {padding_.top, padding_.bottom}, {padding_.left, padding_.right}, {0, 0}});
  }

 private:
  Padding2D padding_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
