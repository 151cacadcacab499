// 2-D convolution of NHWC images with HWIO filters (TensorFlow: `tf.nn.conv2d`), its two
// backprop ops, and `tf.nn.conv2d_transpose`.
//
// Kernels: im2col + GEMM. For each image the receptive fields are copied into the rows of a
// [OH*OW, KH*KW*C] matrix, which times the filter viewed as [KH*KW*C, O] is the output
// [OH*OW, O]. Backprop-input is dy * filter^T followed by col2im (scatter-add of the rows back
// onto the image); backprop-filter is dy^T * col summed over images (then transposed). A 1x1
// stride-1 unpadded convolution needs no im2col: the image itself is the matrix. With at least as
// many images as threads, each thread takes whole images (its own im2col buffer, a single-threaded
// GEMM); with fewer, images run one after another and the im2col and GEMM use every thread.
//
// Gradients (the same graph TensorFlow builds, so second order works):
//   Conv2D(x, w):                dx = Conv2DBackpropInput(w, dy), dw = Conv2DBackpropFilter(x, dy)
//   Conv2DBackpropInput(w, dy):  dw = Conv2DBackpropFilter(g, dy), ddy = Conv2D(g, w)
//   Conv2DBackpropFilter(x, dy): dx = Conv2DBackpropInput(g, dy), ddy = Conv2D(x, g)
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
#include <tapeflow/ops/linalg/detail/gemm.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace nn {

/// Keyword arguments of `tf::nn::conv2d` (TensorFlow: `strides`, `padding`, `dilations`).
///
///     tf::nn::conv2d(x, w, {.strides = 2, .padding = "SAME"});
///     tf::nn::conv2d(x, w, {.padding = tf::nn::Padding::same, .dilations = {2, 2}});
struct Conv2DOptions {
  /// Step of the window along height and width.
  Size2D strides = 1;
  /// "SAME" (output = ceil(input / stride)) or "VALID" (no padding, the default as in Keras).
  PaddingArg padding = Padding::valid;
  /// Spacing between filter taps (atrous convolution); 1 = dense.
  Size2D dilations = 1;
};

}  // namespace nn

namespace ops {

/// Attributes shared by the three convolution ops (TensorFlow's `strides`, `padding`,
/// `dilations`, for the H and W axes; batch and channel strides are always 1).
struct ConvWindow {
  nn::Size2D strides = 1;
  nn::Padding padding = nn::Padding::valid;
  nn::Size2D dilations = 1;
  [[nodiscard]] OpAttributes attributes() const {
    const std::int64_t s[4] = {1, strides.h, strides.w, 1};
    const std::int64_t d[4] = {1, dilations.h, dilations.w, 1};
    return {{"strides", detail::list_text(s, 4)},
            {"padding", padding == nn::Padding::same ? "SAME" : "VALID"},
            {"dilations", detail::list_text(d, 4)},
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

/// A per-thread buffer (slot 0: im2col matrix, slot 1: its gradient, slot 2: filter-gradient
/// partial sums), grown on demand and kept for the thread's lifetime, so steady-state training
/// allocates (and page-faults) nothing here.
template <class T>
T* conv_scratch(int slot, std::int64_t count) {
  thread_local std::vector<T> buffers[3];
  auto& b = buffers[slot];
  if (static_cast<std::int64_t>(b.size()) < count) {
    b.resize(static_cast<std::size_t>(count));
  }
  return b.data();
}

/// Whether the convolution is a plain matrix product (1x1 window, stride 1, no padding).
inline bool is_pointwise(Window2D const& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0;
}

/// Range [first, last) of window taps k whose position `origin + k * step` lies in [0, size).
inline void valid_taps(std::int64_t origin, std::int64_t step, std::int64_t taps, std::int64_t size,
                       std::int64_t& first, std::int64_t& last) {
  // origin + k * step >= 0  <=>  k >= ceil(-origin / step)
  first = origin >= 0 ? 0 : std::min(taps, (-origin + step - 1) / step);
  // origin + k * step < size  <=>  k < ceil((size - origin) / step)
  last = size - origin <= 0 ? 0 : std::min(taps, (size - origin + step - 1) / step);
  last = std::max(last, first);
}

/// Rows [oy0, oy1) x all columns of one image's im2col matrix [OH*OW, KH*KW*C]; padding reads
/// as zero.
template <class T>
void im2col(Window2D const& g, T const* x, T* col, std::int64_t oy0, std::int64_t oy1) {
  std::int64_t const c = g.c;
  std::int64_t const row_len = g.kw * c;
  std::int64_t const k_len = g.kh * row_len;
  std::int64_t kx0 = 0, kx1 = 0;
  for (std::int64_t oy = oy0; oy < oy1; ++oy) {
    std::int64_t const iy0 = oy * g.sh - g.pad_top;
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      T* row = col + (oy * g.ow + ox) * k_len;
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      valid_taps(ix0, g.dw, g.kw, g.w, kx0, kx1);
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        std::int64_t const iy = iy0 + ky * g.dh;
        T* dst = row + ky * row_len;
        if (iy < 0 || iy >= g.h || kx0 == kx1) {
          std::fill_n(dst, row_len, T(0));
          continue;
        }
        // Offset of tap (ky, 0), which may lie left of the image: only valid taps form pointers.
        std::int64_t const base = (iy * g.w + ix0) * c;
        std::fill_n(dst, kx0 * c, T(0));
        if (g.dw == 1) {
          std::copy_n(x + (base + kx0 * c), (kx1 - kx0) * c, dst + kx0 * c);  // one contiguous run
        } else {
          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
            std::copy_n(x + (base + kx * g.dw * c), c, dst + kx * c);
          }
        }
        std::fill_n(dst + kx1 * c, (g.kw - kx1) * c, T(0));
      }
    }
  }
}

/// Adds the rows of one image's im2col-shaped gradient back onto the image `dx` (the adjoint of
/// im2col); taps that fell on padding are dropped.
template <class T>
void col2im(Window2D const& g, T const* col, T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const row_len = g.kw * c;
  std::int64_t const k_len = g.kh * row_len;
  std::int64_t kx0 = 0, kx1 = 0;
  for (std::int64_t oy = 0; oy < g.oh; ++oy) {
    std::int64_t const iy0 = oy * g.sh - g.pad_top;
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      T const* row = col + (oy * g.ow + ox) * k_len;
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      valid_taps(ix0, g.dw, g.kw, g.w, kx0, kx1);
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        std::int64_t const iy = iy0 + ky * g.dh;
        if (iy < 0 || iy >= g.h) {
          continue;
        }
        T const* src = row + ky * row_len;
        std::int64_t const base = (iy * g.w + ix0) * c;  // tap (ky, 0), maybe left of the image
        if (g.dw == 1) {
          T* dst = dx + (base + kx0 * c);
          T const* s = src + kx0 * c;
          for (std::int64_t i = 0; i < (kx1 - kx0) * c; ++i) {
            dst[i] += s[i];
          }
        } else {
          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
            T* d = dx + (base + kx * g.dw * c);
            T const* s = src + kx * c;
            for (std::int64_t i = 0; i < c; ++i) {
              d[i] += s[i];
            }
          }
        }
      }
    }
  }
}

/// Runs `one_image(i)` for every image: whole images per thread when there are enough of them
/// (nested parallel loops then run inline), otherwise one after another on the caller so that
/// each image's im2col and GEMM use all threads.
template <class Body>
void for_each_image(std::int64_t images, Body&& one_image) {
  int const threads = backend::cpu::ThreadPool::global().num_threads();
  if (threads > 1 && images >= threads) {
    backend::cpu::parallel_for(images, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        one_image(i);
      }
    });
  } else {
    for (std::int64_t i = 0; i < images; ++i) {
      one_image(i);
    }
  }
}

/// Fills `col` with one image's im2col matrix, splitting output rows over the pool.
template <class T>
void im2col_parallel(Window2D const& g, T const* x, T* col) {
  std::int64_t const per_row = g.ow * g.kh * g.kw * g.c;
  backend::cpu::parallel_for(g.oh,
                             std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(per_row, 1)),
                             [&](std::int64_t b, std::int64_t e) { im2col(g, x, col, b, e); });
}

/// y[n] = im2col(x[n]) * filter, filter as [KH*KW*C, O].
template <class T>
void conv2d_forward(Window2D const& g, std::int64_t out_channels, T const* x, T const* filter,
                    T* y) {
  std::int64_t const pixels = g.oh * g.ow;
  std::int64_t const k = g.kh * g.kw * g.c;
  for_each_image(g.n, [&](std::int64_t i) {
    T const* xi = x + i * g.h * g.w * g.c;
    T* yi = y + i * pixels * out_channels;
    T const* a = xi;
    if (!is_pointwise(g)) {
      T* col = conv_scratch<T>(0, pixels * k);
      im2col_parallel(g, xi, col);
      a = col;
    }
    gemm(false, false, pixels, out_channels, k, a, k, filter, out_channels, yi, out_channels);
  });
}

/// dx[n] = col2im(dy[n] * filter^T).
template <class T>
void conv2d_backprop_input(Window2D const& g, std::int64_t out_channels, T const* filter,
                           T const* dy, T* dx) {
  std::int64_t const pixels = g.oh * g.ow;
  std::int64_t const k = g.kh * g.kw * g.c;
  for_each_image(g.n, [&](std::int64_t i) {
    T const* dyi = dy + i * pixels * out_channels;
    T* dxi = dx + i * g.h * g.w * g.c;
    if (is_pointwise(g)) {
      gemm(false, true, pixels, k, out_channels, dyi, out_channels, filter, out_channels, dxi, k);
      return;
    }
    T* dcol = conv_scratch<T>(1, pixels * k);
    gemm(false, true, pixels, k, out_channels, dyi, out_channels, filter, out_channels, dcol, k);
    std::fill_n(dxi, g.h * g.w * g.c, T(0));
    col2im(g, dcol, dxi);
  });
}

/// dfilter = sum_n im2col(x[n])^T * dy[n], accumulated transposed as [O, KH*KW*C] =
/// sum_n dy[n]^T * im2col(x[n]) (the GEMM runs ~20% faster with the short O side as its rows)
/// and transposed once at the end. Images are split into one fixed run per thread, each summing
/// into its own buffer; the buffers are added in order, so results do not depend on thread
/// timing.
template <class T>
void conv2d_backprop_filter(Window2D const& g, std::int64_t out_channels, T const* x, T const* dy,
                            T* dfilter) {
  std::int64_t const pixels = g.oh * g.ow;
  std::int64_t const k = g.kh * g.kw * g.c;
  std::int64_t const size = k * out_channels;
  auto one_image = [&](std::int64_t i, T* acc_t) {
    T const* xi = x + i * g.h * g.w * g.c;
    T const* dyi = dy + i * pixels * out_channels;
    T const* b = xi;
    if (!is_pointwise(g)) {
      T* col = conv_scratch<T>(0, pixels * k);
      im2col_parallel(g, xi, col);
      b = col;
    }
    gemm(true, false, out_channels, k, pixels, dyi, out_channels, b, k, acc_t, k, true);
  };
  int const threads = backend::cpu::ThreadPool::global().num_threads();
  std::int64_t const runs = threads > 1 && g.n >= threads ? threads : 1;
  T* const partial = conv_scratch<T>(2, runs * size);
  std::fill_n(partial, runs * size, T(0));
  if (runs == 1) {
    for (std::int64_t i = 0; i < g.n; ++i) {
      one_image(i, partial);
    }
  } else {
    backend::cpu::parallel_for(runs, 1, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t i = g.n * r / runs; i < g.n * (r + 1) / runs; ++i) {
          one_image(i, partial + r * size);
        }
      }
    });
  }
  // dfilter[j, o] = sum_r partial_r[o, j]
  for (std::int64_t j = 0; j < k; ++j) {
    for (std::int64_t o = 0; o < out_channels; ++o) {
      T sum = partial[o * k + j];
      for (std::int64_t r = 1; r < runs; ++r) {
        sum += partial[r * size + o * k + j];
      }
      dfilter[j * out_channels + o] = sum;
    }
  }
}

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
  std::array<std::int64_t, 4> input_sizes{};

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
  std::array<std::int64_t, 4> filter_sizes{};

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
  op.padding = options.padding;
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
