// The declarations of the batch-norm kernels that the ops call (ops/nn/batch_norm.hpp,
// ops/nn/batch_norm_grad.hpp), and the ops' operand check. The bodies, in
// ops/nn/detail/batch_norm_kernels.hpp, need <immintrin.h> for their multiply-adds: header-only
// programs get them through the ops' headers, while programs built with TAPEFLOW_PRECOMPILED
// link their float and double specializations from tapeflow::instantiations.
// IWYU pragma: private, include <tapeflow/ops/nn/batch_norm.hpp>
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// Checks the operands of FusedBatchNormV3: x [N, H, W, C], four vectors of C (mean and
/// variance may be empty when `statistics_unused`: FusedBatchNormV3 in training mode, as
/// TensorFlow allows, unless they are given as the batch's moments).
template <class T, std::size_t R>
void check_batch_norm_operands(std::string_view op, bool statistics_unused,
                               std::array<std::int64_t, R> const& x,
                               std::array<std::array<std::int64_t, 1>, 4> const& params) {
  static_assert(floating_element<T>, "tf::nn::fused_batch_norm: x must be float or double");
  static_assert(R == 4, "tf::nn::fused_batch_norm: x must be rank 4 (NHWC)");
  std::int64_t const c = x[R - 1];
  char const* const names[4] = {"scale", "offset", "mean", "variance"};
  for (std::size_t i = 0; i < 4; ++i) {
    bool const may_be_empty = statistics_unused && i >= 2;
    if (params[i][0] != c && !(may_be_empty && params[i][0] == 0)) {
      throw invalid_argument(std::string(op) + ": " + names[i] + " has " +
                             std::to_string(params[i][0]) + " elements but x of shape " +
                             Shape(x).to_string() + " has " + std::to_string(c) + " channels");
    }
  }
}

/// y[i] = x[i] * a[i] + b[i] for i < n, every element through one vector multiply-add.
template <class T>
void affine_run(T const* x, T const* a, T const* b, T* y, std::int64_t n);

/// The per-channel coefficients of y = x * a + b from scale, offset and the statistics.
template <class T, class Stat>
void batch_norm_coefficients(std::int64_t c, T const* scale, T const* offset, Stat const* mean,
                             Stat const* variance, double epsilon, T* a, T* b);

/// FusedBatchNormV3 over x as [rows, c]; with `compute_moments`, the batch's own moments.
template <class T>
void fused_batch_norm(T const* x, std::int64_t rows, std::int64_t c, T const* scale,
                      T const* offset, T const* mean, T const* variance, double epsilon,
                      bool compute_moments, T* y);

/// FusedBatchNormGradV3's x gradient.
template <class T>
void fused_batch_norm_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                           T const* scale, T const* mean, T const* variance, double epsilon,
                           bool is_training, T* dx);

/// The x gradient given the scale and offset gradients (Note [Batch-norm gradient sums]).
template <class T>
void fused_batch_norm_grad_given_sums(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                                      T const* scale, T const* mean, T const* variance,
                                      T const* scale_backprop, T const* offset_backprop,
                                      double epsilon, T* dx);

/// The scale gradient alone.
template <class T>
void fused_batch_norm_scale_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                                 T const* mean, T const* variance, double epsilon, T* dscale);

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
