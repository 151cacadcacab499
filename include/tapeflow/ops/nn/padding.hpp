// Window arguments shared by convolution and pooling: `tf::nn::Padding` ("SAME"/"VALID"),
// `tf::nn::Size2D` (a height/width pair such as strides), and TensorFlow's output-size and
// padding arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace nn {

/// How a window treats the borders (TensorFlow's `padding="SAME" | "VALID"`).
///
/// * `valid`: no padding; the output holds only windows that fit inside the input:
///   `out = (in - ((k - 1) * dilation + 1)) / stride + 1`.
/// * `same`: zero padding so that `out = ceil(in / stride)`; the padding is split as TensorFlow
///   splits it, the smaller half before (top/left): `pad_total = max((out - 1) * stride +
///   (k - 1) * dilation + 1 - in, 0)`, `pad_before = pad_total / 2`.
enum class Padding { valid, same };

/// A padding argument: `tf::nn::Padding::same` or TensorFlow's spelling, `"SAME"` / `"VALID"`
/// (lowercase as Keras writes it is accepted too), or, for the convolutions, TensorFlow's
/// explicit list `{{0, 0}, {top, bottom}, {left, right}, {0, 0}}`. Throws invalid_argument for
/// other strings.
class PaddingArg {
 public:
  /// The given padding.
  PaddingArg(Padding padding) noexcept : value_(padding) {}  // NOLINT(google-explicit-constructor)
  /// Parses "SAME"/"VALID" (or "same"/"valid"); throws invalid_argument otherwise.
  PaddingArg(std::string_view text) : value_(parse(text)) {}  // NOLINT(google-explicit-constructor)
  /// Parses "SAME"/"VALID" (or "same"/"valid"); throws invalid_argument otherwise.
  PaddingArg(char const* text) : value_(parse(text)) {}  // NOLINT(google-explicit-constructor)
  /// TensorFlow's explicit padding, a {before, after} pair per NHWC axis, written as its list:
  /// `{{0, 0}, {top, bottom}, {left, right}, {0, 0}}`, rows and columns of zeros around the
  /// input. Only the convolutions (`tf::nn::conv2d`, `tf::nn::depthwise_conv2d`) take it.
  /// Throws invalid_argument for a negative amount or padding of the batch or channel axis.
  PaddingArg(std::array<std::int64_t, 2> batch, std::array<std::int64_t, 2> rows,
             std::array<std::int64_t, 2> columns, std::array<std::int64_t, 2> channels)
      : value_(Padding::valid), explicit_({rows[0], rows[1], columns[0], columns[1]}) {
    std::array<std::array<std::int64_t, 2>, 4> const pairs{batch, rows, columns, channels};
    std::string text = "[";
    for (std::size_t a = 0; a < 4; ++a) {
      text += (a > 0 ? ", [" : "[") + std::to_string(pairs[a][0]) + ", " +
              std::to_string(pairs[a][1]) + "]";
    }
    text += "]";
    for (auto const& pair : pairs) {
      if (pair[0] < 0 || pair[1] < 0) {
        throw invalid_argument("tf::nn: explicit padding must be non-negative, got " + text);
      }
    }
    if (batch != std::array<std::int64_t, 2>{} || channels != std::array<std::int64_t, 2>{}) {
      throw invalid_argument(
          "tf::nn: explicit padding of the batch or channel axis is not supported (NHWC), got " +
          text);
    }
  }

  /// The padding chosen; throws invalid_argument for explicit padding, which only the
  /// convolutions take (they read `explicit_paddings()` first).
  [[nodiscard]] Padding value() const {
    if (explicit_) {
      throw invalid_argument(
          "tf::nn: explicit padding is taken by tf::nn::conv2d and tf::nn::depthwise_conv2d "
          "only; this op takes \"SAME\" or \"VALID\"");
    }
    return value_;
  }
  /// The padding chosen (implicit, so a PaddingArg passes where a Padding is expected); as
  /// value().
  operator Padding() const { return value(); }  // NOLINT(google-explicit-constructor)
  /// {top, bottom, left, right} for explicit padding; empty for "SAME" and "VALID".
  [[nodiscard]] std::optional<std::array<std::int64_t, 4>> explicit_paddings() const noexcept {
    return explicit_;
  }

 private:
  static Padding parse(std::string_view text) {
    if (text == "SAME" || text == "same") {
      return Padding::same;
    }
    if (text == "VALID" || text == "valid") {
      return Padding::valid;
    }
    throw invalid_argument("tf::nn: padding must be \"SAME\" or \"VALID\", got \"" +
                           std::string(text) + "\"");
  }
  Padding value_;
  std::optional<std::array<std::int64_t, 4>> explicit_;
};

/// "SAME" or "VALID", as TensorFlow writes the attribute.
constexpr std::string_view padding_name(Padding padding) noexcept {
  return padding == Padding::same ? "SAME" : "VALID";
}

/// A (height, width) pair: window sizes, strides, dilations. One number means both
/// (`2` is `{2, 2}`), as TensorFlow accepts an int for `strides` or `ksize`.
struct Size2D {
  std::int64_t h = 1;  ///< height (rows)
  std::int64_t w = 1;  ///< width (columns)
  constexpr Size2D() noexcept = default;
  /// `{both, both}`.
  constexpr Size2D(std::int64_t both) noexcept  // NOLINT(google-explicit-constructor)
      : h(both), w(both) {}
  /// `{height, width}`.
  constexpr Size2D(std::int64_t height, std::int64_t width) noexcept : h(height), w(width) {}
  /// Same height and width.
  friend constexpr bool operator==(Size2D, Size2D) noexcept = default;
  /// "(h, w)", as TensorFlow prints a pair in errors.
  [[nodiscard]] std::string to_string() const {
    return "(" + std::to_string(h) + ", " + std::to_string(w) + ")";
  }
};

}  // namespace nn

namespace detail::nn_impl {

/// Output size and leading padding of one spatial axis (TensorFlow's
/// `GetWindowedOutputSizeVerbose`). `out` is negative when a VALID window does not fit.
struct WindowAxis {
  std::int64_t out = 0;
  std::int64_t pad_before = 0;
};

inline WindowAxis window_axis(std::int64_t in, std::int64_t k, std::int64_t stride,
                              std::int64_t dilation, nn::Padding padding) noexcept {
  std::int64_t const effective = (k - 1) * dilation + 1;
  if (padding == nn::Padding::valid) {
    if (in < effective) {
      return {-1, 0};
    }
    return {(in - effective) / stride + 1, 0};
  }
  std::int64_t const out = (in + stride - 1) / stride;
  std::int64_t const total = std::max<std::int64_t>((out - 1) * stride + effective - in, 0);
  return {out, total / 2};
}

/// Everything a 2-D window kernel needs: NHWC input, window, output and padding.
struct Window2D {
  std::int64_t n = 0, h = 0, w = 0, c = 0;      // input
  std::int64_t kh = 1, kw = 1;                  // window
  std::int64_t sh = 1, sw = 1, dh = 1, dw = 1;  // strides, dilations
  std::int64_t oh = 0, ow = 0;                  // output
  std::int64_t pad_top = 0, pad_left = 0;
};

/// Checks window attributes (positive sizes) and computes the geometry; `what` names the op and
/// shapes for the error messages.
inline Window2D window_2d(std::string_view op, std::string const& what, std::int64_t n,
                          std::int64_t h, std::int64_t w, std::int64_t c, nn::Size2D k,
                          nn::Size2D strides, nn::Size2D dilations, nn::Padding padding) {
  if (k.h <= 0 || k.w <= 0) {
    throw invalid_argument(std::string(op) + ": window size must be positive, got " +
                           k.to_string() + what);
  }
  if (strides.h <= 0 || strides.w <= 0) {
    throw invalid_argument(std::string(op) + ": strides must be positive, got " +
                           strides.to_string() + what);
  }
  if (dilations.h <= 0 || dilations.w <= 0) {
    throw invalid_argument(std::string(op) + ": dilations must be positive, got " +
                           dilations.to_string() + what);
  }
  Window2D g;
  g.n = n;
  g.h = h;
  g.w = w;
  g.c = c;
  g.kh = k.h;
  g.kw = k.w;
  g.sh = strides.h;
  g.sw = strides.w;
  g.dh = dilations.h;
  g.dw = dilations.w;
  auto const y = window_axis(h, k.h, strides.h, dilations.h, padding);
  auto const x = window_axis(w, k.w, strides.w, dilations.w, padding);
  if (y.out < 0 || x.out < 0) {
    throw invalid_argument(std::string(op) + ": the window " + k.to_string() + " with dilations " +
                           dilations.to_string() +
                           " does not fit in the input with VALID padding (the output size would "
                           "be negative)" +
                           what);
  }
  g.oh = y.out;
  g.ow = x.out;
  g.pad_top = y.pad_before;
  g.pad_left = x.pad_before;
  return g;
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
