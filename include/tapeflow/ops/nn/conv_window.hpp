// What the convolution ops share (Conv2D and its backprops, DepthwiseConv2dNative and its
// backprops): TensorFlow's window attributes and the geometry and shape checks, without any
// kernel, so a convolution op includes only its own.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Attributes shared by the convolution ops, Conv2D, DepthwiseConv2dNative and their backprops
/// (TensorFlow's `strides`, `padding`, `dilations`, for the H and W axes; batch and channel
/// strides are always 1).
struct ConvWindow {
  nn::Size2D strides = 1;
  nn::Padding padding = nn::Padding::valid;
  nn::Size2D dilations = 1;
  /// TensorFlow's padding "EXPLICIT": rows and columns of zeros {top, bottom, left, right} around
  /// the input, in place of `padding`. Graph passes set it when they fold a Pad into the
  /// convolution that reads it (Note [Padding folding] in function/detail/graph_passes.hpp).
  std::optional<std::array<std::int64_t, 4>> explicit_paddings = std::nullopt;
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  /// TensorFlow's attributes (NHWC, four-entry strides and dilations; with explicit paddings,
  /// eight entries, a {before, after} pair per NHWC axis).
  [[nodiscard]] OpAttributes attributes() const {
    OpAttributes attrs{{"strides", std::vector<std::int64_t>{1, strides.h, strides.w, 1}},
                       {"padding", padding == nn::Padding::same ? "SAME" : "VALID"},
                       {"dilations", std::vector<std::int64_t>{1, dilations.h, dilations.w, 1}},
                       {"data_format", "NHWC"}};
    if (explicit_paddings) {
      auto const& p = *explicit_paddings;
      attrs[1].second = "EXPLICIT";
      attrs.emplace_back("explicit_paddings",
                         std::vector<std::int64_t>{0, 0, p[0], p[1], p[2], p[3], 0, 0});
    }
    return attrs;
  }
  /// Sets the padding from a user's argument: "SAME", "VALID" or TensorFlow's explicit pairs.
  void set_padding(nn::PaddingArg const& arg) {
    explicit_paddings = arg.explicit_paddings();
    padding = explicit_paddings ? nn::Padding::valid : arg.value();
  }
  /// Takes zero padding {top, bottom, left, right} of the first input into the window, when the
  /// window pads nothing itself (VALID): the same op then reads the unpadded input. False, and
  /// unchanged, otherwise.
  bool absorb_input_padding(std::array<std::int64_t, 4> const& paddings) {
    if (padding != nn::Padding::valid || explicit_paddings ||
        std::any_of(paddings.begin(), paddings.end(), [](std::int64_t p) { return p < 0; })) {
      return false;
    }
    explicit_paddings = paddings;
    return true;
  }
  /// For an input gradient whose output is the gradient of an input of `input_sizes`: takes a
  /// crop of that output to rows and columns [begin, begin + size) (Pad's gradient) into the
  /// window, as the padding of the smaller input, when the window pads nothing itself (VALID)
  /// and the crop keeps every image and channel. False, and unchanged, otherwise.
  bool take_output_crop(std::array<std::int64_t, 4>& input_sizes,
                        std::array<std::int64_t, 4> const& begin,
                        std::array<std::int64_t, 4> const& size) {
    std::array<std::int64_t, 4> paddings{};
    for (std::size_t axis = 1; axis < 3; ++axis) {
      paddings[2 * (axis - 1)] = begin[axis];
      paddings[2 * (axis - 1) + 1] = input_sizes[axis] - begin[axis] - size[axis];
    }
    if (begin[0] != 0 || begin[3] != 0 || size[0] != input_sizes[0] || size[3] != input_sizes[3] ||
        size[1] < 0 || size[2] < 0 || !absorb_input_padding(paddings)) {
      return false;
    }
    input_sizes = size;
    return true;
  }
};

}  // namespace ops

namespace detail::nn_impl {

inline std::string conv_shapes(std::array<std::int64_t, 4> const& input,
                               std::array<std::int64_t, 4> const& filter) {
  return " (input shape " + Shape(input).to_string() + ", filter shape " +
         Shape(filter).to_string() + ")";
}

/// Geometry of a convolution of an NHWC `input` with an HWIO `filter`; checks the channels.
inline Window2D conv_geometry(std::string_view op, ops::ConvWindow const& window,
                              std::array<std::int64_t, 4> const& input,
                              std::array<std::int64_t, 4> const& filter) {
  std::string const what = conv_shapes(input, filter);
  if (input[3] != filter[2]) {
    throw invalid_argument(std::string(op) + ": the input depth " + std::to_string(input[3]) +
                           " does not match the filter's input depth " + std::to_string(filter[2]) +
                           what);
  }
  if (!window.explicit_paddings) {
    return window_2d(op, what, input[0], input[1], input[2], input[3], {filter[0], filter[1]},
                     window.strides, window.dilations, window.padding);
  }
  // VALID over the input with its zeros; the kernels read the zeros as taps outside the input.
  auto const& p = *window.explicit_paddings;
  Window2D g =
      window_2d(op, what, input[0], input[1] + p[0] + p[1], input[2] + p[2] + p[3], input[3],
                {filter[0], filter[1]}, window.strides, window.dilations, nn::Padding::valid);
  g.h = input[1];
  g.w = input[2];
  g.pad_top = p[0];
  g.pad_left = p[2];
  return g;
}

/// Checks that `dy` has the shape the forward convolution produces.
inline void check_out_backprop(std::string_view op, Window2D const& g, std::int64_t out_channels,
                               std::array<std::int64_t, 4> const& dy,
                               std::array<std::int64_t, 4> const& input,
                               std::array<std::int64_t, 4> const& filter) {
  std::array<std::int64_t, 4> const expected{g.n, g.oh, g.ow, out_channels};
  if (dy != expected) {
    throw invalid_argument(std::string(op) + ": out_backprop has shape " + Shape(dy).to_string() +
                           " but the convolution's output shape is " + Shape(expected).to_string() +
                           conv_shapes(input, filter));
  }
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
