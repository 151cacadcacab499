// Depthwise 2-D convolution of NHWC images (TensorFlow: `tf.nn.depthwise_conv2d`, op
// "DepthwiseConv2dNative") and its two backprop ops: each input channel c is convolved with its
// own filters w[:, :, c, m], m < multiplier, giving output channel c * multiplier + m.
//
// Kernels: ops/nn/detail/depthwise_kernels.hpp (direct SIMD loops over channel blocks).
//
// Gradients (the graph TensorFlow builds, so second order works):
//   DepthwiseConv2dNative(x, w):  dx = ...BackpropInput(w, dy), dw = ...BackpropFilter(x, dy)
//   ...BackpropInput(w, dy):      dw = ...BackpropFilter(g, dy), ddy = DepthwiseConv2dNative(g, w)
//   ...BackpropFilter(x, dy):     dx = ...BackpropInput(g, dy),  ddy = DepthwiseConv2dNative(x, g)
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/detail/depthwise_kernels_fwd.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

// The kernels' bodies; with TAPEFLOW_PRECOMPILED they come compiled from tapeflow::instantiations,
// and programs do not parse <immintrin.h>.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/nn/detail/depthwise_kernels.hpp>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

template <class T, std::size_t R>
void check_depthwise_operands() {
  static_assert(floating_element<T>,
                "tf::nn::depthwise_conv2d: input and filter must be float or double");
  static_assert(R == 4, "tf::nn::depthwise_conv2d: input, filter and out_backprop must be rank 4");
}

}  // namespace detail::nn_impl

namespace ops {

struct DepthwiseConv2dNativeBackpropInput;
struct DepthwiseConv2dNativeBackpropFilter;

/// Depthwise 2-D convolution, NHWC input [N, H, W, C] with filter [KH, KW, C, M] ->
/// [N, OH, OW, C * M] (TensorFlow op "DepthwiseConv2dNative").
struct DepthwiseConv2dNative : ConvWindow {
  static constexpr std::string_view name = "DepthwiseConv2dNative";
  /// Its first input is the convolution's input: a Pad that feeds it may fold into its window
  /// (ConvWindow::absorb_input_padding, Note [Padding folding]).
  static constexpr bool folds_input_padding = true;
  /// Its CPU kernel takes an offered output epilogue (Note [Output epilogues]).
  static constexpr bool output_epilogue = true;

  template <class T, std::size_t R, std::size_t F>
  OutSpec<T, 4> infer(Tensor<T, R> const& input, Tensor<T, F> const& filter) const {
    detail::nn_impl::check_depthwise_operands<T, R>();
    detail::nn_impl::check_depthwise_operands<T, F>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter.dims());
    return {{g.n, g.oh, g.ow, filter.dims()[2] * filter.dims()[3]}};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input, Tensor<T, 4> const& filter) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter.dims());
    detail::nn_impl::depthwise_forward(g, filter.dims()[3], input.data(), filter.data(),
                                       detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&, Tensor<T, 4> const& input,
                Tensor<T, 4> const& filter) const;
};

/// The gradient of DepthwiseConv2dNative with respect to its input: [N, H, W, C] from the
/// filter and out_backprop [N, OH, OW, C * M] (TensorFlow op
/// "DepthwiseConv2dNativeBackpropInput"; its first input, `input_sizes`, is a member here).
struct DepthwiseConv2dNativeBackpropInput : ConvWindow {
  static constexpr std::string_view name = "DepthwiseConv2dNativeBackpropInput";
  static constexpr std::size_t graph_inputs_at = 0;  ///< `input_sizes` is TensorFlow's first
  std::array<std::int64_t, 4> input_sizes{};         ///< the input's shape
  /// Its output cropped to rows and columns (Pad's gradient) is this op for the smaller input
  /// (Note [Padding folding]).
  bool absorb_output_crop(std::array<std::int64_t, 4> const& begin,
                          std::array<std::int64_t, 4> const& size) {
    return take_output_crop(input_sizes, begin, size);
  }

  /// TensorFlow's `input_sizes` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"input_sizes", detail::int32_vector(input_sizes)}};
  }

  template <class T, std::size_t F, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, F> const& filter, Tensor<T, R> const& out_backprop) const {
    detail::nn_impl::check_depthwise_operands<T, F>();
    detail::nn_impl::check_depthwise_operands<T, R>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input_sizes, filter.dims());
    detail::nn_impl::check_out_backprop(name, g, filter.dims()[2] * filter.dims()[3],
                                        out_backprop.dims(), input_sizes, filter.dims());
    return {input_sizes};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& filter,
               Tensor<T, 4> const& out_backprop) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input_sizes, filter.dims());
    detail::nn_impl::depthwise_backprop_input(g, filter.dims()[3], filter.data(),
                                              out_backprop.data(),
                                              detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& filter,
                Tensor<T, 4> const& out_backprop) const;
};

/// The gradient of DepthwiseConv2dNative with respect to its filter: [KH, KW, C, M] from the
/// input and out_backprop (TensorFlow op "DepthwiseConv2dNativeBackpropFilter"; its second
/// input, `filter_sizes`, is a member here).
struct DepthwiseConv2dNativeBackpropFilter : ConvWindow {
  static constexpr std::string_view name = "DepthwiseConv2dNativeBackpropFilter";
  /// Its first input is the convolution's input: a Pad that feeds it may fold into its window
  /// (ConvWindow::absorb_input_padding, Note [Padding folding]).
  static constexpr bool folds_input_padding = true;
  static constexpr std::size_t graph_inputs_at = 1;  ///< TensorFlow's: input, filter_sizes, ...
  std::array<std::int64_t, 4> filter_sizes{};        ///< the filter's shape

  /// TensorFlow's `filter_sizes` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"filter_sizes", detail::int32_vector(filter_sizes)}};
  }

  template <class T, std::size_t R, std::size_t D>
  OutSpec<T, 4> infer(Tensor<T, R> const& input, Tensor<T, D> const& out_backprop) const {
    detail::nn_impl::check_depthwise_operands<T, R>();
    detail::nn_impl::check_depthwise_operands<T, D>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter_sizes);
    detail::nn_impl::check_out_backprop(name, g, filter_sizes[2] * filter_sizes[3],
                                        out_backprop.dims(), input.dims(), filter_sizes);
    return {filter_sizes};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input,
               Tensor<T, 4> const& out_backprop) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter_sizes);
    detail::nn_impl::depthwise_backprop_filter(g, filter_sizes[3], input.data(),
                                               out_backprop.data(),
                                               detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& input,
                Tensor<T, 4> const& out_backprop) const;
};

// The gradients, after all three ops are complete types.

template <class T>
auto DepthwiseConv2dNative::gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&,
                                     Tensor<T, 4> const& input, Tensor<T, 4> const& filter) const {
  ConvWindow const window = *this;
  return std::tuple{[=] {
                      return detail::execute(
                          DepthwiseConv2dNativeBackpropInput{window, input.dims()}, filter, dy);
                    },
                    [=] {
                      return detail::execute(
                          DepthwiseConv2dNativeBackpropFilter{window, filter.dims()}, input, dy);
                    }};
}

template <class T>
auto DepthwiseConv2dNativeBackpropInput::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                                                  Tensor<T, 4> const& filter,
                                                  Tensor<T, 4> const& out_backprop) const {
  ConvWindow const window = *this;
  return std::tuple{[=] {
                      return detail::execute(
                          DepthwiseConv2dNativeBackpropFilter{window, filter.dims()}, dz,
                          out_backprop);
                    },
                    [=] { return detail::execute(DepthwiseConv2dNative{window}, dz, filter); }};
}

template <class T>
auto DepthwiseConv2dNativeBackpropFilter::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                                                   Tensor<T, 4> const& input,
                                                   Tensor<T, 4> const& out_backprop) const {
  ConvWindow const window = *this;
  return std::tuple{[=] {
                      return detail::execute(
                          DepthwiseConv2dNativeBackpropInput{window, input.dims()}, dz,
                          out_backprop);
                    },
                    [=] { return detail::execute(DepthwiseConv2dNative{window}, input, dz); }};
}

}  // namespace ops

namespace nn {

/// Keyword arguments of `tf::nn::depthwise_conv2d` (TensorFlow: `strides`, `padding`,
/// `dilations`, for height and width).
struct DepthwiseConv2DOptions {
  Size2D strides = 1;  ///< step of the window along height and width
  /// "SAME", "VALID" (the default, as in Keras), or explicit pairs
  /// `{{0, 0}, {top, bottom}, {left, right}, {0, 0}}` (TensorFlow's list form).
  PaddingArg padding = Padding::valid;
  Size2D dilations = 1;  ///< spacing between filter taps; 1 = dense
};

/// Depthwise 2-D convolution (TensorFlow: `tf.nn.depthwise_conv2d(input, filter, strides,
/// padding, dilations=)`, op DepthwiseConv2dNative), NHWC: input channel c is convolved with
/// its own `M` filters `filter[:, :, c, :]`, giving output channels c * M .. c * M + M - 1.
///
///     auto x = tf::random::normal<float>({8, 112, 112, 32});
///     auto w = tf::random::normal<float>({3, 3, 32, 1});
///     auto y = tf::nn::depthwise_conv2d(x, w, {.strides = 2, .padding = "SAME"});  // [8,56,56,32]
///
/// `input`: [N, H, W, C]; `filter`: [KH, KW, C, M], same float dtype. Output
/// [N, OH, OW, C * M], OH and OW as for `tf::nn::conv2d`. Differentiable in both arguments,
/// to any order. Throws invalid_argument when the channels disagree, a stride, dilation or
/// filter size is not positive, or a VALID window does not fit.
template <tensor_like Input, tensor_like Filter>
Tensor<value_type_of<Input>, 4> depthwise_conv2d(Input const& input, Filter const& filter,
                                                 DepthwiseConv2DOptions const& options = {}) {
  static_assert(rank_of<Input> == 4 && rank_of<Filter> == 4,
                "tf::nn::depthwise_conv2d(input, filter): input [N, H, W, C] and filter "
                "[KH, KW, C, M] must be rank 4");
  static_assert(std::same_as<value_type_of<Input>, value_type_of<Filter>>,
                "tf::nn::depthwise_conv2d(input, filter): input and filter must have the same "
                "dtype");
  ops::DepthwiseConv2dNative op;
  op.strides = options.strides;
  op.set_padding(options.padding);
  op.dilations = options.dilations;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(input),
                                   tapeflow::detail::as_tensor(filter));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
