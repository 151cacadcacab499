// 2-D convolution of NHWC images with HWIO filters (TensorFlow: `tf.nn.conv2d`), its two
// backprop ops, and `tf.nn.conv2d_transpose`.
//
// Kernels: GEMMs over the whole batch built from the GEMM's packing and micro-kernels
// (ops/linalg/detail/gemm.hpp, ops/nn/detail/), on a zero-padded copy of the input so no kernel
// checks bounds, and without ever writing an im2col matrix:
//   * forward: y [N*OH*OW, O] = im2col(x) [N*OH*OW, KH*KW*C] * filter [KH*KW*C, O]. The filter is
//     packed once; the threads claim tiles of output pixels and run the convolution
//     micro-kernel, which reads each window tap's C channels straight from the image through
//     one pointer per pixel plus the tap's offset, keeping the tile's sums in registers across
//     all taps (an "indirect GEMM", as XNNPACK has).
//   * input gradient, stride 1: the transposed convolution is itself a stride-1 convolution of
//     dy with the filter rotated 180 degrees and its channel axes swapped, so it runs through
//     the forward kernel: no col2im scatter and no zeroing of dx. Other strides: per image,
//     dy * filter^T then col2im.
//   * filter gradient: dfilter^T [O, KH*KW*C] = dy^T [O, pixels] * im2col(x) [pixels, KH*KW*C],
//     one GEMM over all pixels of the batch. dy^T needs no packing (each pixel's O values are
//     contiguous); with a multiple of NR channels, B's rows are read in place from the image,
//     otherwise B panels are packed straight from it. The pixels are split into one fixed run
//     per thread, each summing into its own buffer, added in order: results do not depend on
//     thread timing.
// A 1x1 stride-1 unpadded convolution needs none of this: the batch itself is the matrix.
//
// Gradients (the same graph TensorFlow builds, so second order works):
//   Conv2D(x, w):                dx = Conv2DBackpropInput(w, dy), dw = Conv2DBackpropFilter(x, dy)
//   Conv2DBackpropInput(w, dy):  dw = Conv2DBackpropFilter(g, dy), ddy = Conv2D(g, w)
//   Conv2DBackpropFilter(x, dy): dx = Conv2DBackpropInput(g, dy), ddy = Conv2D(x, g)
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/detail/conv2d_kernels_fwd.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

// The kernels' bodies; with TAPEFLOW_PRECOMPILED they come compiled from tapeflow::instantiations,
// and programs do not parse <immintrin.h>.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/nn/detail/conv2d_kernels.hpp>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace nn {

/// Keyword arguments of `tf::nn::conv2d` (TensorFlow: `strides`, `padding`, `dilations`).
///
///     tf::nn::conv2d(x, w, {.strides = 2, .padding = "SAME"});
///     tf::nn::conv2d(x, w, {.padding = tf::nn::Padding::same, .dilations = {2, 2}});
///     tf::nn::conv2d(x, w, {.padding = {{0, 0}, {1, 2}, {1, 2}, {0, 0}}});  // explicit
struct Conv2DOptions {
  /// Step of the window along height and width.
  Size2D strides = 1;
  /// "SAME" (output = ceil(input / stride)), "VALID" (no padding, the default as in Keras), or
  /// explicit pairs `{{0, 0}, {top, bottom}, {left, right}, {0, 0}}` (TensorFlow's list form).
  PaddingArg padding = Padding::valid;
  /// Spacing between filter taps (atrous convolution); 1 = dense.
  Size2D dilations = 1;
};

}  // namespace nn

namespace detail::nn_impl {

template <class T, std::size_t R>
void check_conv_operands() {
  static_assert(floating_element<T>, "tf::nn::conv2d: input and filters must be float or double");
  static_assert(R == 4, "tf::nn::conv2d: input, filters and out_backprop must be rank 4");
}

}  // namespace detail::nn_impl

namespace ops {

struct Conv2DBackpropInput;
struct Conv2DBackpropFilter;

/// 2-D convolution, NHWC input [N, H, W, C] with HWIO filter [KH, KW, C, O] -> [N, OH, OW, O]
/// (TensorFlow op "Conv2D"; strictly a cross-correlation, as in TensorFlow).
struct Conv2D : ConvWindow {
  static constexpr std::string_view name = "Conv2D";
  /// Its first input is the convolution's input: a Pad that feeds it may fold into its window
  /// (ConvWindow::absorb_input_padding, Note [Padding folding]).
  static constexpr bool folds_input_padding = true;
  /// Its CPU kernel takes an offered output epilogue (Note [Output epilogues]).
  static constexpr bool output_epilogue = true;

  template <class T, std::size_t R, std::size_t F>
  OutSpec<T, 4> infer(Tensor<T, R> const& input, Tensor<T, F> const& filter) const {
    detail::nn_impl::check_conv_operands<T, R>();
    detail::nn_impl::check_conv_operands<T, F>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter.dims());
    return {{g.n, g.oh, g.ow, filter.dims()[3]}};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input, Tensor<T, 4> const& filter) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter.dims());
    detail::nn_impl::conv2d_forward(g, filter.dims()[3], input.data(), filter.data(),
                                    tapeflow::detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&, Tensor<T, 4> const& input,
                Tensor<T, 4> const& filter) const;
};

/// The gradient of Conv2D with respect to its input: [N, H, W, C] from the filter and
/// out_backprop [N, OH, OW, O] (TensorFlow op "Conv2DBackpropInput"; TensorFlow's first input,
/// `input_sizes`, is the attribute `input_sizes` here). Also the transposed convolution.
struct Conv2DBackpropInput : ConvWindow {
  static constexpr std::string_view name = "Conv2DBackpropInput";
  static constexpr std::size_t graph_inputs_at = 0;  ///< `input_sizes` is TensorFlow's first
  std::array<std::int64_t, 4> input_sizes{};
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
    detail::nn_impl::check_conv_operands<T, F>();
    detail::nn_impl::check_conv_operands<T, R>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input_sizes, filter.dims());
    detail::nn_impl::check_out_backprop(name, g, filter.dims()[3], out_backprop.dims(), input_sizes,
                                        filter.dims());
    return {input_sizes};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& filter,
               Tensor<T, 4> const& out_backprop) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input_sizes, filter.dims());
    detail::nn_impl::conv2d_backprop_input(g, filter.dims()[3], filter.data(), out_backprop.data(),
                                           tapeflow::detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& filter,
                Tensor<T, 4> const& out_backprop) const;
};

/// The gradient of Conv2D with respect to its filter: [KH, KW, C, O] from the input and
/// out_backprop (TensorFlow op "Conv2DBackpropFilter"; TensorFlow's second input,
/// `filter_sizes`, is the attribute `filter_sizes` here).
struct Conv2DBackpropFilter : ConvWindow {
  static constexpr std::string_view name = "Conv2DBackpropFilter";
  /// Its first input is the convolution's input: a Pad that feeds it may fold into its window
  /// (ConvWindow::absorb_input_padding, Note [Padding folding]).
  static constexpr bool folds_input_padding = true;
  static constexpr std::size_t graph_inputs_at = 1;  ///< TensorFlow's: input, filter_sizes, ...
  std::array<std::int64_t, 4> filter_sizes{};

  /// TensorFlow's `filter_sizes` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"filter_sizes", detail::int32_vector(filter_sizes)}};
  }

  template <class T, std::size_t R, std::size_t D>
  OutSpec<T, 4> infer(Tensor<T, R> const& input, Tensor<T, D> const& out_backprop) const {
    detail::nn_impl::check_conv_operands<T, R>();
    detail::nn_impl::check_conv_operands<T, D>();
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter_sizes);
    detail::nn_impl::check_out_backprop(name, g, filter_sizes[3], out_backprop.dims(), input.dims(),
                                        filter_sizes);
    return {filter_sizes};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input,
               Tensor<T, 4> const& out_backprop) const {
    auto const g = detail::nn_impl::conv_geometry(name, *this, input.dims(), filter_sizes);
    detail::nn_impl::conv2d_backprop_filter(g, filter_sizes[3], input.data(), out_backprop.data(),
                                            tapeflow::detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& input,
                Tensor<T, 4> const& out_backprop) const;
};

// The gradients, after all three ops are complete types.

template <class T>
auto Conv2D::gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&, Tensor<T, 4> const& input,
                      Tensor<T, 4> const& filter) const {
  ConvWindow const window = *this;
  return std::tuple{
      [=] {
        return tapeflow::detail::execute(Conv2DBackpropInput{window, input.dims()}, filter, dy);
      },
      [=] {
        return tapeflow::detail::execute(Conv2DBackpropFilter{window, filter.dims()}, input, dy);
      }};
}

template <class T>
auto Conv2DBackpropInput::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                                   Tensor<T, 4> const& filter,
                                   Tensor<T, 4> const& out_backprop) const {
  ConvWindow const window = *this;
  return std::tuple{[=] {
                      return tapeflow::detail::execute(Conv2DBackpropFilter{window, filter.dims()},
                                                       dz, out_backprop);
                    },
                    [=] { return tapeflow::detail::execute(Conv2D{window}, dz, filter); }};
}

template <class T>
auto Conv2DBackpropFilter::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                                    Tensor<T, 4> const& input,
                                    Tensor<T, 4> const& out_backprop) const {
  ConvWindow const window = *this;
  return std::tuple{[=] {
                      return tapeflow::detail::execute(Conv2DBackpropInput{window, input.dims()},
                                                       dz, out_backprop);
                    },
                    [=] { return tapeflow::detail::execute(Conv2D{window}, input, dz); }};
}

}  // namespace ops

namespace nn {

/// 2-D convolution (TensorFlow: `tf.nn.conv2d(input, filters, strides, padding, dilations=)`),
/// NHWC data layout.
///
///     auto x = tf::random::normal<float>({50, 28, 28, 1});
///     auto w = tf::random::normal<float>({5, 5, 1, 32}, {.stddev = 0.1});
///     auto y = tf::nn::conv2d(x, w, {.strides = 1, .padding = "SAME"});  // [50, 28, 28, 32]
///
/// `input`: [N, H, W, C]; `filters`: [KH, KW, C, O], same float dtype. Output:
/// [N, OH, OW, O] with OH = ceil(H / stride) for SAME and (H - (KH - 1) * dilation - 1) /
/// stride + 1 for VALID (see `tf::nn::Padding`). Differentiable in both arguments, to any order.
///
/// Throws invalid_argument when the channels disagree (`C` of input vs filters), a stride,
/// dilation or filter size is not positive, or a VALID window does not fit; the message names
/// the op and both shapes. A rank or dtype mistake does not compile.
template <tensor_like Input, tensor_like Filters>
Tensor<value_type_of<Input>, 4> conv2d(Input const& input, Filters const& filters,
                                       Conv2DOptions const& options = {}) {
  static_assert(rank_of<Input> == 4, "tf::nn::conv2d(input, filters): input must be rank 4 (NHWC)");
  static_assert(rank_of<Filters> == 4,
                "tf::nn::conv2d(input, filters): filters must be rank 4 (height, width, "
                "in_channels, out_channels)");
  static_assert(std::same_as<value_type_of<Input>, value_type_of<Filters>>,
                "tf::nn::conv2d(input, filters): input and filters must have the same dtype");
  static_assert(floating_element<value_type_of<Input>>,
                "tf::nn::conv2d(input, filters): input and filters must be float or double");
  ops::Conv2D op;
  op.strides = options.strides;
  op.set_padding(options.padding);
  op.dilations = options.dilations;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(input),
                                   tapeflow::detail::as_tensor(filters));
}

/// Positional form, in TensorFlow's argument order: `tf::nn::conv2d(x, w, 1, "SAME")`.
template <tensor_like Input, tensor_like Filters>
Tensor<value_type_of<Input>, 4> conv2d(Input const& input, Filters const& filters, Size2D strides,
                                       PaddingArg padding, Size2D dilations = 1) {
  return conv2d(input, filters, Conv2DOptions{strides, padding, dilations});
}

/// Transposed convolution, the gradient of conv2d with respect to its input (TensorFlow:
/// `tf.nn.conv2d_transpose(input, filters, output_shape, strides, padding="SAME")`).
///
/// `input`: [N, H, W, O]; `filters`: [KH, KW, C, O] (note: output channels third, as in
/// TensorFlow); `output_shape`: [N, OH, OW, C], the shape a conv2d with these options would map
/// back to `input`'s shape. Throws invalid_argument if it does not.
template <tensor_like Input, tensor_like Filters>
Tensor<value_type_of<Input>, 4> conv2d_transpose(Input const& input, Filters const& filters,
                                                 std::array<std::int64_t, 4> const& output_shape,
                                                 Size2D strides, PaddingArg padding = Padding::same,
                                                 Size2D dilations = 1) {
  static_assert(rank_of<Input> == 4 && rank_of<Filters> == 4,
                "tf::nn::conv2d_transpose(input, filters, output_shape): input and filters must "
                "be rank 4");
  static_assert(std::same_as<value_type_of<Input>, value_type_of<Filters>>,
                "tf::nn::conv2d_transpose(input, filters, output_shape): input and filters must "
                "have the same dtype");
  ops::Conv2DBackpropInput op;
  op.strides = strides;
  op.padding = padding;
  op.dilations = dilations;
  op.input_sizes = output_shape;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(filters),
                                   tapeflow::detail::as_tensor(input));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
