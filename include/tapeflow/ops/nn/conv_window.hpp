// What the convolution ops share (Conv2D and its backprops, DepthwiseConv2dNative and its
// backprops): TensorFlow's window attributes and the geometry and shape checks, without any
// kernel, so a convolution op includes only its own.
#pragma once

#include <array>
#include <cstdint>
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
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  /// TensorFlow's attributes (NHWC, four-entry strides and dilations).
  [[nodiscard]] OpAttributes attributes() const {
    return {{"strides", std::vector<std::int64_t>{1, strides.h, strides.w, 1}},
            {"padding", padding == nn::Padding::same ? "SAME" : "VALID"},
            {"dilations", std::vector<std::int64_t>{1, dilations.h, dilations.w, 1}},
            {"data_format", "NHWC"}};
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
  return window_2d(op, what, input[0], input[1], input[2], input[3], {filter[0], filter[1]},
                   window.strides, window.dilations, window.padding);
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
