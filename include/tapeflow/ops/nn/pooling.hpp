// 2-D max and average pooling of NHWC images (TensorFlow: `tf.nn.max_pool2d`,
// `tf.nn.avg_pool2d`), with their gradient ops.
//
// Kernels are direct loops over output rows (one row = one image row of windows), channels
// innermost so the compiler vectorizes across them; the gradient ops scatter into the input and
// split the work by image. Gradients (as TensorFlow builds them, so second order works):
//   MaxPool(x)                   -> dx = MaxPoolGrad(x, y, dy)
//   MaxPoolGrad(x, y, g)         -> dg = MaxPoolGradGrad(x, y, dz)   (x, y: zero gradient)
//   MaxPoolGradGrad(x, y, g)     -> dg = MaxPoolGrad(x, y, dz)       (x, y: zero gradient)
//   AvgPool(x)                   -> dx = AvgPoolGrad(dy)
//   AvgPoolGrad(g)               -> dg = AvgPool(dz)
// Max pooling routes each window's gradient to its first maximal element in row-major window
// order, as TensorFlow's CPU kernel does. Average pooling with SAME padding divides by the
// number of input elements inside the window, not by the window size (padding is not counted).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/nn/padding.hpp>
#include <tapeflow/ops/op_concepts.hpp>

#if defined(__GNUC__) || defined(__clang__)
#define TAPEFLOW_NN_RESTRICT __restrict__
#else
#define TAPEFLOW_NN_RESTRICT
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Attributes shared by the pooling ops (TensorFlow's `ksize`, `strides`, `padding`, for the H
/// and W axes; batch and channel windows are always 1).
struct PoolWindow {
  nn::Size2D ksize = 1;
  nn::Size2D strides = 1;
  nn::Padding padding = nn::Padding::valid;
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  /// TensorFlow's attributes (NHWC, four-entry ksize and strides).
  [[nodiscard]] OpAttributes attributes() const {
    return {{"ksize", std::vector<std::int64_t>{1, ksize.h, ksize.w, 1}},
            {"strides", std::vector<std::int64_t>{1, strides.h, strides.w, 1}},
            {"padding", padding == nn::Padding::same ? "SAME" : "VALID"},
            {"data_format", "NHWC"}};
  }
};

}  // namespace ops

namespace detail::nn_impl {

/// Geometry of pooling an NHWC input; checks the window.
inline Window2D pool_geometry(std::string_view op, ops::PoolWindow const& window,
                              std::array<std::int64_t, 4> const& input) {
  std::string const what = " (input shape " + Shape(input).to_string() + ", ksize " +
                           window.ksize.to_string() + ", strides " + window.strides.to_string() +
                           ", padding " + std::string(nn::padding_name(window.padding)) + ")";
  return window_2d(op, what, input[0], input[1], input[2], input[3], window.ksize, window.strides,
                   1, window.padding);
}

inline std::array<std::int64_t, 4> pooled_dims(Window2D const& g) { return {g.n, g.oh, g.ow, g.c}; }

/// Checks that a gradient-op operand has the shape `expected`.
inline void check_pool_operand(std::string_view op, char const* operand,
                               std::array<std::int64_t, 4> const& got,
                               std::array<std::int64_t, 4> const& expected,
                               std::array<std::int64_t, 4> const& input) {
  if (got != expected) {
    throw invalid_argument(std::string(op) + ": " + operand + " has shape " +
                           Shape(got).to_string() + " but pooling an input of shape " +
                           Shape(input).to_string() + " gives " + Shape(expected).to_string());
  }
}

/// Range [first, last) of window taps whose position `origin + k` lies in [0, size).
inline void pool_taps(std::int64_t origin, std::int64_t taps, std::int64_t size,
                      std::int64_t& first, std::int64_t& last) {
  first = std::clamp<std::int64_t>(-origin, 0, taps);
  last = std::clamp<std::int64_t>(size - origin, first, taps);
}

/// Output rows (image, output row) per parallel chunk.
inline std::int64_t pool_grain(Window2D const& g) {
  std::int64_t const per_row = std::max<std::int64_t>(1, g.ow * g.kh * g.kw * g.c);
  return std::max<std::int64_t>(1, 32768 / per_row);
}

/// Calls `visit(out, first_in, ky0, ky1, kx0, kx1)` for each output pixel of rows [r0, r1) of
/// the flattened (image, output row) range: `out` is the pixel's offset in the output,
/// `first_in` the input offset of window tap (0, 0) (possibly outside the image), and
/// [ky0, ky1) x [kx0, kx1) the taps inside the image.
template <class Visit>
void for_each_window(Window2D const& g, std::int64_t r0, std::int64_t r1, Visit&& visit) {
  std::int64_t ky0 = 0, ky1 = 0, kx0 = 0, kx1 = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t const n = r / g.oh;
    std::int64_t const oy = r % g.oh;
    std::int64_t const iy0 = oy * g.sh - g.pad_top;
    pool_taps(iy0, g.kh, g.h, ky0, ky1);
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      pool_taps(ix0, g.kw, g.w, kx0, kx1);
      visit((r * g.ow + ox) * g.c, ((n * g.h + iy0) * g.w + ix0) * g.c, ky0, ky1, kx0, kx1);
    }
  }
}

template <class T>
void max_pool(Window2D const& g, T const* x, T* y) {
  std::int64_t const c = g.c;
  std::int64_t const row = g.w * c;
  backend::cpu::parallel_for(g.n * g.oh, pool_grain(g), [&](std::int64_t r0, std::int64_t r1) {
    for_each_window(g, r0, r1,
                    [&](std::int64_t o, std::int64_t in, std::int64_t ky0, std::int64_t ky1,
                        std::int64_t kx0, std::int64_t kx1) {
                      T* out = y + o;
                      std::int64_t i = 0;
                      if constexpr (backend::cpu::kVectorizable<T>) {
                        // A vector of channels at a time (max as std::max: a NaN tap is
                        // skipped unless it comes first).
                        using Vec = backend::cpu::GenericVec<T>;
                        using V = typename Vec::V;
                        for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
                          V m = Vec::broadcast(std::numeric_limits<T>::lowest());
                          for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                            for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                              V const v = Vec::load(x + (in + ky * row + kx * c + i));
                              m = m < v ? v : m;
                            }
                          }
                          Vec::store(out + i, m);
                        }
                      }
                      for (; i < c; ++i) {
                        T m = std::numeric_limits<T>::lowest();
                        for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                            m = std::max(m, x[in + ky * row + kx * c + i]);
                          }
                        }
                        out[i] = m;
                      }
                    });
  });
}

/// best = max(best, v) per channel, remembering tap `t` where v wins (strictly greater, so the
/// first maximum is kept). Branch-free over non-aliasing arrays of 32-bit taps, so it
/// vectorizes.
template <class T>
void keep_greater(T const* TAPEFLOW_NN_RESTRICT v, T* TAPEFLOW_NN_RESTRICT best,
                  std::int32_t* TAPEFLOW_NN_RESTRICT tap, std::int32_t t, std::int64_t c) {
  for (std::int64_t i = 0; i < c; ++i) {
    bool const greater = v[i] > best[i];
    best[i] = greater ? v[i] : best[i];
    tap[i] = greater ? t : tap[i];
  }
}

/// Calls `route(out_offset, in_offset)` for every output element and the input element its
/// window's maximum came from (the first in row-major window order), over output rows
/// [r0, r1).
template <class T, class Route>
void max_pool_argmax(Window2D const& g, T const* x, std::int64_t r0, std::int64_t r1,
                     Route&& route) {
  std::int64_t const c = g.c;
  std::int64_t const row = g.w * c;
  std::vector<std::int64_t> tap_offset(static_cast<std::size_t>(g.kh * g.kw));
  for (std::int64_t ky = 0; ky < g.kh; ++ky) {
    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
      tap_offset[static_cast<std::size_t>(ky * g.kw + kx)] = ky * row + kx * c;
    }
  }
  std::vector<T> best(static_cast<std::size_t>(c));
  std::vector<std::int32_t> tap(static_cast<std::size_t>(c));
  T* const bv = best.data();
  std::int32_t* const tv = tap.data();
  std::int64_t const* const offset = tap_offset.data();
  for_each_window(g, r0, r1,
                  [&](std::int64_t o, std::int64_t in, std::int64_t ky0, std::int64_t ky1,
                      std::int64_t kx0, std::int64_t kx1) {
                    if (ky0 == ky1 || kx0 == kx1) {
                      return;  // an empty window (cannot happen with SAME or VALID)
                    }
                    auto const first = static_cast<std::int32_t>(ky0 * g.kw + kx0);
                    std::copy_n(x + (in + offset[first]), c, bv);
                    std::fill_n(tv, c, first);
                    for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                      for (std::int64_t kx = ky == ky0 ? kx0 + 1 : kx0; kx < kx1; ++kx) {
                        auto const t = static_cast<std::int32_t>(ky * g.kw + kx);
                        keep_greater(x + (in + offset[t]), bv, tv, t, c);
                      }
                    }
                    for (std::int64_t i = 0; i < c; ++i) {
                      route(o + i, in + offset[tv[i]] + i);
                    }
                  });
}

/// max_pool_grad for windows that do not overlap (stride >= window, the usual 2x2 / 2): each
/// input element gets its window's gradient or 0, written once, so no zero fill first (except
/// for elements no window covers) and no scatter. Channels a vector at a time; the tap of the
/// first maximum is tracked per lane, exactly as max_pool_argmax does.
template <class T>
void max_pool_grad_disjoint(Window2D const& g, T const* x, T const* dy, T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const row = g.w * c;
  bool const covered = g.sh == g.kh && g.sw == g.kw && g.oh * g.kh - g.pad_top >= g.h &&
                       g.ow * g.kw - g.pad_left >= g.w;
  if (!covered) {
    std::fill_n(dx, g.n * g.h * g.w * g.c, T(0));
  }
  backend::cpu::parallel_for(g.n * g.oh, pool_grain(g), [&](std::int64_t r0, std::int64_t r1) {
    for_each_window(g, r0, r1,
                    [&](std::int64_t o, std::int64_t in, std::int64_t ky0, std::int64_t ky1,
                        std::int64_t kx0, std::int64_t kx1) {
                      if (ky0 == ky1 || kx0 == kx1) {
                        return;
                      }
                      std::int64_t const first = in + ky0 * row + kx0 * c;
                      std::int64_t i = 0;
                      if constexpr (backend::cpu::kVectorizable<T>) {
                        using Vec = backend::cpu::GenericVec<T>;
                        using V = typename Vec::V;
                        for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
                          V best = Vec::load(x + (first + i));
                          V arg{};  // index of the winning tap, counted in loop order
                          T t = 0;
                          for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                            for (std::int64_t kx = ky == ky0 ? kx0 + 1 : kx0; kx < kx1; ++kx) {
                              t += T(1);
                              V const v = Vec::load(x + (in + ky * row + kx * c + i));
                              auto const greater = v > best;
                              best = greater ? v : best;
                              arg = greater ? Vec::broadcast(t) : arg;
                            }
                          }
                          V const d = Vec::load(dy + (o + i));
                          t = 0;
                          for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                            for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                              Vec::store(dx + (in + ky * row + kx * c + i),
                                         arg == Vec::broadcast(t) ? d : V{});
                              t += T(1);
                            }
                          }
                        }
                      }
                      for (; i < c; ++i) {
                        T best = x[first + i];
                        std::int64_t arg = first + i;
                        for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                          for (std::int64_t kx = ky == ky0 ? kx0 + 1 : kx0; kx < kx1; ++kx) {
                            std::int64_t const at = in + ky * row + kx * c + i;
                            if (x[at] > best) {
                              best = x[at];
                              arg = at;
                            }
                          }
                        }
                        for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                            std::int64_t const at = in + ky * row + kx * c + i;
                            dx[at] = at == arg ? dy[o + i] : T(0);
                          }
                        }
                      }
                    });
  });
}

/// dx = scatter of dy to each window's argmax (windows of one image write only that image,
/// so images run in parallel).
template <class T>
void max_pool_grad(Window2D const& g, T const* x, T const* dy, T* dx) {
  if constexpr (floating_element<T>) {
    if (g.sh >= g.kh && g.sw >= g.kw) {
      max_pool_grad_disjoint(g, x, dy, dx);
      return;
    }
  }
  std::int64_t const image = g.h * g.w * g.c;
  backend::cpu::parallel_for(g.n, 1, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {  // each image zeroed in its task, then scattered
      std::fill_n(dx + n * image, image, T(0));
      max_pool_argmax(g, x, n * g.oh, (n + 1) * g.oh,
                      [&](std::int64_t o, std::int64_t i) { dx[i] += dy[o]; });
    }
  });
}

/// out = gather of g at each window's argmax (shaped like the pooled output).
template <class T>
void max_pool_grad_grad(Window2D const& geometry, T const* x, T const* g, T* out) {
  std::int64_t const row = geometry.ow * geometry.c;
  backend::cpu::parallel_for(
      geometry.n * geometry.oh, pool_grain(geometry), [&](std::int64_t r0, std::int64_t r1) {
        std::fill_n(out + r0 * row, (r1 - r0) * row, T(0));  // this task's output rows
        max_pool_argmax(geometry, x, r0, r1,
                        [&](std::int64_t o, std::int64_t i) { out[o] = g[i]; });
      });
}

template <class T>
void avg_pool(Window2D const& g, T const* x, T* y) {
  std::int64_t const c = g.c;
  std::int64_t const row = g.w * c;
  backend::cpu::parallel_for(g.n * g.oh, pool_grain(g), [&](std::int64_t r0, std::int64_t r1) {
    for_each_window(g, r0, r1,
                    [&](std::int64_t o, std::int64_t in, std::int64_t ky0, std::int64_t ky1,
                        std::int64_t kx0, std::int64_t kx1) {
                      T* out = y + o;
                      std::fill_n(out, c, T(0));
                      for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                        for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                          T const* v = x + (in + ky * row + kx * c);
                          for (std::int64_t i = 0; i < c; ++i) {
                            out[i] += v[i];
                          }
                        }
                      }
                      std::int64_t const count = (ky1 - ky0) * (kx1 - kx0);
                      if (count > 0) {
                        T const scale = T(1) / static_cast<T>(count);
                        for (std::int64_t i = 0; i < c; ++i) {
                          out[i] *= scale;
                        }
                      }
                    });
  });
}

/// dx: each window spreads dy / count evenly over its input elements (each image zeroed in its
/// task, then scattered).
template <class T>
void avg_pool_grad(Window2D const& g, T const* dy, T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const row = g.w * c;
  std::int64_t const image = g.h * row;
  backend::cpu::parallel_for(g.n, 1, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {
      std::fill_n(dx + n * image, image, T(0));
      for_each_window(g, n * g.oh, (n + 1) * g.oh,
                      [&](std::int64_t o, std::int64_t in, std::int64_t ky0, std::int64_t ky1,
                          std::int64_t kx0, std::int64_t kx1) {
                        std::int64_t const count = (ky1 - ky0) * (kx1 - kx0);
                        if (count == 0) {
                          return;
                        }
                        T const scale = T(1) / static_cast<T>(count);
                        for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                            T* d = dx + (in + ky * row + kx * c);
                            for (std::int64_t i = 0; i < c; ++i) {
                              d[i] += dy[o + i] * scale;
                            }
                          }
                        }
                      });
    }
  });
}

}  // namespace detail::nn_impl

namespace ops {

struct MaxPoolGrad;
struct MaxPoolGradGrad;
struct AvgPoolGrad;

/// Max over each window of an NHWC input (TensorFlow op "MaxPool").
struct MaxPool : PoolWindow {
  static constexpr std::string_view name = "MaxPool";

  template <class T, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, R> const& input) const {
    static_assert(numeric_element<T>, "tf::nn::max_pool2d(input, ...): input must be numeric");
    static_assert(R == 4, "tf::nn::max_pool2d(input, ...): input must be rank 4 (NHWC)");
    return {
        detail::nn_impl::pooled_dims(detail::nn_impl::pool_geometry(name, *this, input.dims()))};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input) const {
    auto const g = detail::nn_impl::pool_geometry(name, *this, input.dims());
    detail::nn_impl::max_pool(g, input.data(), detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const& y, Tensor<T, 4> const& input) const;
};

/// The gradient of MaxPool: `grad` (pooled shape) routed to each window's maximum, shaped like
/// the input (TensorFlow op "MaxPoolGrad", inputs orig_input, orig_output, grad).
struct MaxPoolGrad : PoolWindow {
  static constexpr std::string_view name = "MaxPoolGrad";

  template <class T, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, R> const& orig_input, Tensor<T, R> const& orig_output,
                      Tensor<T, R> const& grad) const {
    static_assert(R == 4, "MaxPoolGrad: operands must be rank 4 (NHWC)");
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input.dims());
    auto const pooled = detail::nn_impl::pooled_dims(g);
    detail::nn_impl::check_pool_operand(name, "orig_output", orig_output.dims(), pooled,
                                        orig_input.dims());
    detail::nn_impl::check_pool_operand(name, "grad", grad.dims(), pooled, orig_input.dims());
    return {orig_input.dims()};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& orig_input, Tensor<T, 4> const&,
               Tensor<T, 4> const& grad) const {
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input.dims());
    detail::nn_impl::max_pool_grad(g, orig_input.data(), grad.data(),
                                   detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& orig_input,
                Tensor<T, 4> const& orig_output, Tensor<T, 4> const& grad) const;
};

/// The gradient of MaxPoolGrad with respect to its `grad` input: `grad` (input-shaped) gathered
/// at each window's maximum, shaped like the pooled output (TensorFlow op "MaxPoolGradGrad").
struct MaxPoolGradGrad : PoolWindow {
  static constexpr std::string_view name = "MaxPoolGradGrad";

  template <class T, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, R> const& orig_input, Tensor<T, R> const& orig_output,
                      Tensor<T, R> const& grad) const {
    static_assert(R == 4, "MaxPoolGradGrad: operands must be rank 4 (NHWC)");
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input.dims());
    auto const pooled = detail::nn_impl::pooled_dims(g);
    detail::nn_impl::check_pool_operand(name, "orig_output", orig_output.dims(), pooled,
                                        orig_input.dims());
    if (grad.dims() != orig_input.dims()) {
      throw invalid_argument(std::string(name) + ": grad has shape " + grad.shape().to_string() +
                             " but orig_input has shape " + orig_input.shape().to_string());
    }
    return {pooled};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& orig_input, Tensor<T, 4> const&,
               Tensor<T, 4> const& grad) const {
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input.dims());
    detail::nn_impl::max_pool_grad_grad(g, orig_input.data(), grad.data(),
                                        detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const& orig_input,
                Tensor<T, 4> const& orig_output, Tensor<T, 4> const& grad) const;
};

/// Mean over the input elements inside each window (TensorFlow op "AvgPool").
struct AvgPool : PoolWindow {
  static constexpr std::string_view name = "AvgPool";

  template <class T, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, R> const& input) const {
    static_assert(floating_element<T>,
                  "tf::nn::avg_pool2d(input, ...): input must be float or double");
    static_assert(R == 4, "tf::nn::avg_pool2d(input, ...): input must be rank 4 (NHWC)");
    return {
        detail::nn_impl::pooled_dims(detail::nn_impl::pool_geometry(name, *this, input.dims()))};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& input) const {
    auto const g = detail::nn_impl::pool_geometry(name, *this, input.dims());
    detail::nn_impl::avg_pool(g, input.data(), detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&, Tensor<T, 4> const& input) const;
};

/// The gradient of AvgPool: `grad` (pooled shape) spread evenly over each window, shaped
/// `orig_input_shape` (TensorFlow op "AvgPoolGrad"; its first input is the attribute here).
struct AvgPoolGrad : PoolWindow {
  static constexpr std::string_view name = "AvgPoolGrad";
  static constexpr std::size_t graph_inputs_at = 0;  ///< `orig_input_shape` is TensorFlow's first
  std::array<std::int64_t, 4> orig_input_shape{};

  /// TensorFlow's `orig_input_shape` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"orig_input_shape", detail::int32_vector(orig_input_shape)}};
  }

  template <class T, std::size_t R>
  OutSpec<T, 4> infer(Tensor<T, R> const& grad) const {
    static_assert(R == 4, "AvgPoolGrad: grad must be rank 4 (NHWC)");
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input_shape);
    detail::nn_impl::check_pool_operand(name, "grad", grad.dims(), detail::nn_impl::pooled_dims(g),
                                        orig_input_shape);
    return {orig_input_shape};
  }
  template <class T>
  void compute(Tensor<T, 4>& out, Tensor<T, 4> const& grad) const {
    auto const g = detail::nn_impl::pool_geometry(name, *this, orig_input_shape);
    detail::nn_impl::avg_pool_grad(g, grad.data(), detail::tensor_access::mutable_data(out));
  }
  template <class T>
  auto gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&, Tensor<T, 4> const&) const {
    return detail::execute(AvgPool{static_cast<PoolWindow const&>(*this)}, dz);
  }
};

// Gradients, after all ops are complete types.

template <class T>
auto MaxPool::gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const& y,
                       Tensor<T, 4> const& input) const {
  return detail::execute(MaxPoolGrad{static_cast<PoolWindow const&>(*this)}, input, y, dy);
}

template <class T>
auto MaxPoolGrad::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                           Tensor<T, 4> const& orig_input, Tensor<T, 4> const& orig_output,
                           Tensor<T, 4> const&) const {
  PoolWindow const window = *this;
  return std::tuple{
      [=] { return zeros_like(orig_input); }, [=] { return zeros_like(orig_output); },
      [=] { return detail::execute(MaxPoolGradGrad{window}, orig_input, orig_output, dz); }};
}

template <class T>
auto MaxPoolGradGrad::gradient(Tensor<T, 4> const& dz, Tensor<T, 4> const&,
                               Tensor<T, 4> const& orig_input, Tensor<T, 4> const& orig_output,
                               Tensor<T, 4> const&) const {
  PoolWindow const window = *this;
  return std::tuple{
      [=] { return zeros_like(orig_input); }, [=] { return zeros_like(orig_output); },
      [=] { return detail::execute(MaxPoolGrad{window}, orig_input, orig_output, dz); }};
}

template <class T>
auto AvgPool::gradient(Tensor<T, 4> const& dy, Tensor<T, 4> const&,
                       Tensor<T, 4> const& input) const {
  return detail::execute(AvgPoolGrad{static_cast<PoolWindow const&>(*this), input.dims()}, dy);
}

}  // namespace ops

namespace nn {

/// Max pooling over 2-D windows of an NHWC tensor (TensorFlow:
/// `tf.nn.max_pool2d(input, ksize, strides, padding)`).
///
///     auto p = tf::nn::max_pool2d(x, 2, 2, "SAME");            // [N, 28, 28, C] -> [N, 14, 14, C]
///     auto q = tf::nn::max_pool2d(x, {3, 3}, {2, 2}, tf::nn::Padding::valid);
///
/// `ksize`, `strides`: window size and step along (height, width), one number for both.
/// The gradient goes to the first maximal element of each window. Throws invalid_argument for
/// a non-positive window or stride, or a VALID window larger than the input.
template <tensor_like Input>
tensor_type_of<Input> max_pool2d(Input const& input, Size2D ksize, Size2D strides,
                                 PaddingArg padding) {
  static_assert(rank_of<Input> == 4, "tf::nn::max_pool2d(input, ...): input must be rank 4 (NHWC)");
  static_assert(numeric_element<value_type_of<Input>>,
                "tf::nn::max_pool2d(input, ...): input must be numeric");
  ops::MaxPool op;
  op.ksize = ksize;
  op.strides = strides;
  op.padding = padding;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(input));
}

/// Average pooling over 2-D windows of an NHWC tensor (TensorFlow:
/// `tf.nn.avg_pool2d(input, ksize, strides, padding)`).
///
/// With SAME padding, border windows average only the input elements they cover (padding is
/// not counted), as TensorFlow does. Arguments and errors as for `max_pool2d`; float or double
/// only.
template <tensor_like Input>
tensor_type_of<Input> avg_pool2d(Input const& input, Size2D ksize, Size2D strides,
                                 PaddingArg padding) {
  static_assert(rank_of<Input> == 4, "tf::nn::avg_pool2d(input, ...): input must be rank 4 (NHWC)");
  static_assert(floating_element<value_type_of<Input>>,
                "tf::nn::avg_pool2d(input, ...): input must be float or double");
  ops::AvgPool op;
  op.ksize = ksize;
  op.strides = strides;
  op.padding = padding;
  return tapeflow::detail::execute(op, tapeflow::detail::as_tensor(input));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE

#undef TAPEFLOW_NN_RESTRICT
