// Depthwise 2-D convolution of NHWC images (TensorFlow: `tf.nn.depthwise_conv2d`, op
// "DepthwiseConv2dNative") and its two backprop ops: each input channel c is convolved with its
// own filters w[:, :, c, m], m < multiplier, giving output channel c * multiplier + m.
//
// Kernels: direct loops (a depthwise filter has no reduction over channels, so no GEMM), the
// channels innermost so the compiler vectorizes across them; forward by output row, the input
// gradient scattering into one image per task, the filter gradient summed in a fixed number of
// row blocks, each into its own buffer, added in order (results do not depend on threads).
//
// Gradients (the graph TensorFlow builds, so second order works):
//   DepthwiseConv2dNative(x, w):  dx = ...BackpropInput(w, dy), dw = ...BackpropFilter(x, dy)
//   ...BackpropInput(w, dy):      dw = ...BackpropFilter(g, dy), ddy = DepthwiseConv2dNative(g, w)
//   ...BackpropFilter(x, dy):     dx = ...BackpropInput(g, dy),  ddy = DepthwiseConv2dNative(x, g)
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

template <class T, std::size_t R>
void check_depthwise_operands() {
  static_assert(floating_element<T>,
                "tf::nn::depthwise_conv2d: input and filter must be float or double");
  static_assert(R == 4, "tf::nn::depthwise_conv2d: input, filter and out_backprop must be rank 4");
}

/// Taps [first, last) of a window axis whose position `origin + k * step` lies in [0, size).
inline void depthwise_taps(std::int64_t origin, std::int64_t step, std::int64_t taps,
                           std::int64_t size, std::int64_t& first, std::int64_t& last) {
  first = origin >= 0 ? 0 : std::min(taps, (-origin + step - 1) / step);
  last = size - origin <= 0 ? 0 : std::min(taps, (size - origin + step - 1) / step);
  last = std::max(last, first);
}

/// Calls `visit(n, out_pixel, in_pixel0, ky0, ky1, kx0, kx1)` for each output pixel of the
/// flattened (image, output row) rows [r0, r1): `out_pixel` indexes [N * OH * OW], `in_pixel0`
/// the input pixel of tap (0, 0) (possibly outside the image) in [N * H * W], and the taps
/// inside the image are [ky0, ky1) x [kx0, kx1).
template <class Visit>
void for_each_depthwise_window(Window2D const& g, std::int64_t r0, std::int64_t r1, Visit&& visit) {
  std::int64_t ky0 = 0, ky1 = 0, kx0 = 0, kx1 = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t const n = r / g.oh;
    std::int64_t const iy0 = (r % g.oh) * g.sh - g.pad_top;
    depthwise_taps(iy0, g.dh, g.kh, g.h, ky0, ky1);
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      depthwise_taps(ix0, g.dw, g.kw, g.w, kx0, kx1);
      visit(r * g.ow + ox, (n * g.h + iy0) * g.w + ix0, ky0, ky1, kx0, kx1);
    }
  }
}

/// Output rows (image, output row) per parallel chunk.
inline std::int64_t depthwise_grain(Window2D const& g, std::int64_t cm) {
  return std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, g.ow * g.kh * g.kw * cm));
}

/// y[n, oy, ox, c * M + m] = sum over taps of x[n, iy, ix, c] * w[ky, kx, c, m].
template <class T>
void depthwise_forward(Window2D const& g, std::int64_t mult, T const* x, T const* w, T* y) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  backend::cpu::parallel_for(
      g.n * g.oh, depthwise_grain(g, cm), [&](std::int64_t r0, std::int64_t r1) {
        for_each_depthwise_window(g, r0, r1,
                                  [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                      std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                                    T* out = y + o * cm;
                                    std::fill_n(out, cm, T(0));
                                    for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                      for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                        T const* in = x + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                        T const* f = w + (ky * g.kw + kx) * cm;
                                        if (mult == 1) {
                                          for (std::int64_t i = 0; i < c; ++i) {
                                            out[i] += in[i] * f[i];
                                          }
                                        } else {
                                          for (std::int64_t i = 0; i < c; ++i) {
                                            for (std::int64_t m = 0; m < mult; ++m) {
                                              out[i * mult + m] += in[i] * f[i * mult + m];
                                            }
                                          }
                                        }
                                      }
                                    }
                                  });
      });
}

/// dx[n, iy, ix, c] = sum over the windows and m that read it of dy[.., c * M + m] * w[.., c, m]
/// (a scatter; each task owns whole images).
template <class T>
void depthwise_backprop_input(Window2D const& g, std::int64_t mult, T const* w, T const* dy,
                              T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  std::fill_n(dx, g.n * g.h * g.w * c, T(0));
  backend::cpu::parallel_for(g.n, 1, [&](std::int64_t n0, std::int64_t n1) {
    for_each_depthwise_window(g, n0 * g.oh, n1 * g.oh,
                              [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                  std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                                T const* d = dy + o * cm;
                                for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                  for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                    T* in = dx + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                    T const* f = w + (ky * g.kw + kx) * cm;
                                    for (std::int64_t i = 0; i < c; ++i) {
                                      T sum = 0;
                                      for (std::int64_t m = 0; m < mult; ++m) {
                                        sum += d[i * mult + m] * f[i * mult + m];
                                      }
                                      in[i] += sum;
                                    }
                                  }
                                }
                              });
  });
}

/// dw[ky, kx, c, m] = sum over output pixels of x[n, iy, ix, c] * dy[n, oy, ox, c * M + m].
template <class T>
void depthwise_backprop_filter(Window2D const& g, std::int64_t mult, T const* x, T const* dy,
                               T* dw) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  std::int64_t const size = g.kh * g.kw * cm;
  std::int64_t const rows = g.n * g.oh;
  // A fixed number of blocks (not one per thread), so the sum's order never changes.
  std::int64_t const blocks = std::clamp<std::int64_t>(rows, 1, 32);
  std::vector<T> partial(static_cast<std::size_t>(blocks * size), T(0));
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* acc = partial.data() + b * size;
      for_each_depthwise_window(g, rows * b / blocks, rows * (b + 1) / blocks,
                                [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                    std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                                  T const* d = dy + o * cm;
                                  for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                    for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                      T const* in = x + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                      T* f = acc + (ky * g.kw + kx) * cm;
                                      for (std::int64_t i = 0; i < c; ++i) {
                                        for (std::int64_t m = 0; m < mult; ++m) {
                                          f[i * mult + m] += in[i] * d[i * mult + m];
                                        }
                                      }
                                    }
                                  }
                                });
    }
  });
  std::fill_n(dw, size, T(0));
  for (std::int64_t b = 0; b < blocks; ++b) {
    T const* p = partial.data() + b * size;
    for (std::int64_t i = 0; i < size; ++i) {
      dw[i] += p[i];
    }
  }
}

}  // namespace detail::nn_impl

namespace ops {

struct DepthwiseConv2dNativeBackpropInput;
struct DepthwiseConv2dNativeBackpropFilter;

/// Depthwise 2-D convolution, NHWC input [N, H, W, C] with filter [KH, KW, C, M] ->
/// [N, OH, OW, C * M] (TensorFlow op "DepthwiseConv2dNative").
struct DepthwiseConv2dNative : ConvWindow {
  static constexpr std::string_view name = "DepthwiseConv2dNative";

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
  Size2D strides = 1;                   ///< step of the window along height and width
  PaddingArg padding = Padding::valid;  ///< "SAME" or "VALID" (the default, as in Keras)
  Size2D dilations = 1;                 ///< spacing between filter taps; 1 = dense
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
  op.padding = options.padding;
  op.dilations = options.dilations;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(input),
                                   tapeflow::detail::as_tensor(filter));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
