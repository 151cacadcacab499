// Batch normalization of channels-last tensors (TensorFlow op "FusedBatchNormV3", NHWC;
// `tf.compat.v1.nn.fused_batch_norm`).
//
// y = scale * (x - mean) / sqrt(variance + epsilon) + offset, per channel (the last axis).
// In training mode mean and variance are the batch's (over every axis but the last; the
// biased variance, as TensorFlow normalizes with), and the mean/variance inputs are ignored;
// in inference mode they are the inputs (a layer's moving statistics).
//
// TensorFlow's op has six outputs (y, the batch statistics and three reserve spaces); an op
// here has one, so this op is `y` alone (TensorFlow's first output, what export refers to).
// Who needs the batch statistics (BatchNormalization's moving averages) computes them with
// reduce_mean, as Keras 3's `ops.moments` does.
//
// Kernel: x viewed as [rows, C]; the statistics are summed in double per fixed block of rows
// (the blocks do not depend on the thread count, and their partial sums are added in order, so
// results do not depend on thread timing), in two passes (mean, then squared deviations: no
// cancellation), then one pass y = x * a + b with a = scale / sqrt(var + eps), b = offset -
// mean * a per channel.
//
// Gradient (TensorFlow's FusedBatchNormGradV3, written here in other ops so that second order
// works; no gradient for mean and variance, as in TensorFlow):
//   training:  xhat = (x - m) * r with the batch's m, r = 1 / sqrt(v + eps); M rows
//              doffset = sum(dy), dscale = sum(dy * xhat),
//              dx = scale * r * (dy - doffset / M - xhat * dscale / M)
//   inference: dx = dy * scale * r, dscale = sum(dy * (x - mean) * r), doffset = sum(dy)
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tapeflow/backend/cpu/simd.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// Checks the operands of FusedBatchNormV3: x [N, H, W, C], four vectors of C (mean and
/// variance may be empty in training mode, as TensorFlow allows).
template <class T, std::size_t R>
void check_batch_norm_operands(std::string_view op, bool is_training,
                               std::array<std::int64_t, R> const& x,
                               std::array<std::array<std::int64_t, 1>, 4> const& params) {
  static_assert(floating_element<T>, "tf::nn::fused_batch_norm: x must be float or double");
  static_assert(R == 4, "tf::nn::fused_batch_norm: x must be rank 4 (NHWC)");
  std::int64_t const c = x[R - 1];
  char const* const names[4] = {"scale", "offset", "mean", "variance"};
  for (std::size_t i = 0; i < 4; ++i) {
    bool const may_be_empty = is_training && i >= 2;
    if (params[i][0] != c && !(may_be_empty && params[i][0] == 0)) {
      throw invalid_argument(std::string(op) + ": " + names[i] + " has " +
                             std::to_string(params[i][0]) + " elements but x of shape " +
                             Shape(x).to_string() + " has " + std::to_string(c) + " channels");
    }
  }
}

/// Rows of [rows, c] per statistics block: about 16k elements, whatever the thread count.
inline std::int64_t batch_norm_block_rows(std::int64_t c) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(c, 1));
}

/// Per-channel sums over the rows of x [rows, c] of `term(x, channel)`, in double, added block
/// by block in order.
template <class T, class Term>
std::vector<double> channel_sums(T const* x, std::int64_t rows, std::int64_t c, Term term) {
  std::int64_t const block = batch_norm_block_rows(c);
  std::int64_t const blocks = (rows + block - 1) / block;
  std::vector<double> partial(static_cast<std::size_t>(blocks * c), 0.0);
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      double* acc = partial.data() + b * c;
      std::int64_t const end = std::min(rows, (b + 1) * block);
      for (std::int64_t r = b * block; r < end; ++r) {
        T const* row = x + r * c;
        for (std::int64_t i = 0; i < c; ++i) {
          acc[i] += term(static_cast<double>(row[i]), i);
        }
      }
    }
  });
  std::vector<double> sums(static_cast<std::size_t>(c), 0.0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (std::int64_t i = 0; i < c; ++i) {
      sums[static_cast<std::size_t>(i)] += partial[static_cast<std::size_t>(b * c + i)];
    }
  }
  return sums;
}

/// y = scale * (x - mean) / sqrt(variance + epsilon) + offset over x [rows, c], with the
/// batch's mean and biased variance when `is_training`, else the given ones.
template <class T>
void fused_batch_norm(T const* x, std::int64_t rows, std::int64_t c, T const* scale,
                      T const* offset, T const* mean, T const* variance, double epsilon,
                      bool is_training, T* y) {
  std::vector<double> m(static_cast<std::size_t>(c));
  std::vector<double> v(static_cast<std::size_t>(c));
  if (is_training) {
    double const count = static_cast<double>(std::max<std::int64_t>(rows, 1));
    m = channel_sums(x, rows, c, [](double value, std::int64_t) { return value; });
    for (double& s : m) {
      s /= count;
    }
    v = channel_sums(x, rows, c, [&](double value, std::int64_t i) {
      double const d = value - m[static_cast<std::size_t>(i)];
      return d * d;
    });
    for (double& s : v) {
      s /= count;
    }
  } else {
    std::copy_n(mean, c, m.begin());
    std::copy_n(variance, c, v.begin());
  }
  std::vector<T> a(static_cast<std::size_t>(c));
  std::vector<T> b(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const r = 1.0 / std::sqrt(v[i] + epsilon);
    a[i] = static_cast<T>(static_cast<double>(scale[i]) * r);
    b[i] =
        static_cast<T>(static_cast<double>(offset[i]) - m[i] * static_cast<double>(scale[i]) * r);
  }
  T const* const av = a.data();
  T const* const bv = b.data();
  std::int64_t const grain = std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(c, 1));
  backend::cpu::parallel_for(rows, grain, [&](std::int64_t r0, std::int64_t r1) {
    // Explicit vectors: the compiler's own would check x, y, a and b for overlap per row.
    using Vec = typename backend::cpu::VecFor<T>::type;
    for (std::int64_t r = r0; r < r1; ++r) {
      T const* in = x + r * c;
      T* out = y + r * c;
      std::int64_t i = 0;
      for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
        Vec::store(out + i, Vec::fma(Vec::load(in + i), Vec::load(av + i), Vec::load(bv + i)));
      }
      for (; i < c; ++i) {
        out[i] = in[i] * av[i] + bv[i];
      }
    }
  });
}

}  // namespace detail::nn_impl

namespace ops {

/// Batch normalization of an NHWC tensor by channel (TensorFlow op "FusedBatchNormV3", its
/// output `y`): inputs x [N, H, W, C], scale, offset, mean, variance [C]; `is_training` uses
/// the batch's statistics instead of mean and variance.
struct FusedBatchNormV3 {
  static constexpr std::string_view name = "FusedBatchNormV3";
  static constexpr std::string_view type_attr = "T";   ///< TensorFlow's dtype attribute (x, y)
  static constexpr std::string_view output_arg = "y";  ///< TensorFlow's first output
  float epsilon = 1e-3f;  ///< added to the variance (TensorFlow's attribute, float)
  bool is_training = true;

  /// TensorFlow's attributes: `U` (the parameters' dtype, x's here), epsilon, NHWC, mode.
  /// `exponential_avg_factor` stays 1: the op does not update running statistics.
  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const&, Tensor<T, 1> const&,
                                        Tensor<T, 1> const&, Tensor<T, 1> const&,
                                        Tensor<T, 1> const&) const {
    return {{"U", dtype_v<T>},
            {"epsilon", epsilon},
            {"exponential_avg_factor", 1.0f},
            {"data_format", "NHWC"},
            {"is_training", is_training}};
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(Tensor<T, R> const& x, Tensor<T, 1> const& scale, Tensor<T, 1> const& offset,
                      Tensor<T, 1> const& mean, Tensor<T, 1> const& variance) const {
    detail::nn_impl::check_batch_norm_operands<T, R>(
        name, is_training, x.dims(), {scale.dims(), offset.dims(), mean.dims(), variance.dims()});
    return {x.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& y, Tensor<T, R> const& x, Tensor<T, 1> const& scale,
               Tensor<T, 1> const& offset, Tensor<T, 1> const& mean,
               Tensor<T, 1> const& variance) const {
    std::int64_t const c = x.dims()[R - 1];
    std::int64_t const rows = c == 0 ? 0 : x.num_elements() / c;
    detail::nn_impl::fused_batch_norm(x.data(), rows, c, scale.data(), offset.data(), mean.data(),
                                      variance.data(), static_cast<double>(epsilon), is_training,
                                      detail::tensor_access::mutable_data(y));
  }
  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const& x,
                Tensor<T, 1> const& scale, Tensor<T, 1> const&, Tensor<T, 1> const& mean,
                Tensor<T, 1> const& variance) const {
    // The statistics both entries need are computed here; dx (the large one) only if asked.
    int const axes[3] = {0, 1, 2};
    auto const eps = static_cast<T>(epsilon);
    bool const training = is_training;
    Tensor<T, 1> const doffset = reduce_sum(dy, axes);
    Tensor<T, R> xhat;
    Tensor<T, 1> r;
    Tensor<T, 1> dscale;
    if (training) {
      auto const centered = x - reduce_mean(x, axes);
      r = T(1) / sqrt(reduce_mean(square(centered), axes) + eps);
      xhat = centered * r;
      dscale = reduce_sum(dy * xhat, axes);
    } else {
      r = T(1) / sqrt(variance + eps);
    }
    auto const count =
        static_cast<T>(x.num_elements() / std::max<std::int64_t>(x.dims()[R - 1], 1));
    return std::tuple{[=]() -> Tensor<T, R> {
                        if (training) {
                          return (scale * r) * (dy - doffset / count - xhat * (dscale / count));
                        }
                        return dy * (scale * r);
                      },
                      [=]() -> Tensor<T, 1> {
                        return training ? dscale : reduce_sum(dy * ((x - mean) * r), axes);
                      },
                      doffset, no_gradient, no_gradient};
  }
};

}  // namespace ops

namespace nn {

/// Keyword arguments of `tf::nn::fused_batch_norm` (TensorFlow's `epsilon`, `is_training`).
struct FusedBatchNormOptions {
  /// Added to the variance before the square root (TensorFlow's default 0.001).
  float epsilon = 1e-3f;
  /// Normalize with the batch's mean and (biased) variance; `mean` and `variance` are ignored.
  bool is_training = true;
};

/// Batch normalization by channel, channels last (TensorFlow:
/// `tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean, variance, epsilon,
/// data_format="NHWC", is_training)`, op FusedBatchNormV3):
/// `scale * (x - m) / sqrt(v + epsilon) + offset`, with (m, v) the batch's mean and biased
/// variance over every axis but the last when `is_training`, else `mean` and `variance`.
///
///     auto y = tf::nn::fused_batch_norm(x, gamma, beta, moving_mean, moving_var,
///                                       {.is_training = false});
///
/// `x` has rank 2 ([N, C]) to 4 (NHWC); other ranks are viewed as [rows, 1, 1, C] (a free
/// reshape), so every call is TensorFlow's 4-D op. The parameters are [C] vectors of x's dtype
/// (mean and variance may be empty when training). Unlike TensorFlow's, it returns `y` only:
/// compute the batch statistics with `tf::reduce_mean` where needed. Differentiable in x,
/// scale and offset (not in mean and variance, as in TensorFlow). Throws invalid_argument when
/// a parameter's length is not C.
template <tensor_like X, tensor_like Scale, tensor_like Offset, tensor_like Mean,
          tensor_like Variance>
tensor_type_of<X> fused_batch_norm(X const& x, Scale const& scale, Offset const& offset,
                                   Mean const& mean, Variance const& variance,
                                   FusedBatchNormOptions const& options = {}) {
  using T = value_type_of<X>;
  constexpr std::size_t R = rank_of<X>;
  static_assert(R >= 2 && R <= 4,
                "tf::nn::fused_batch_norm(x, ...): x must have rank 2 to 4 (channels last)");
  static_assert(floating_element<T>, "tf::nn::fused_batch_norm(x, ...): x must be float or double");
  static_assert(
      rank_of<Scale> == 1 && rank_of<Offset> == 1 && rank_of<Mean> == 1 && rank_of<Variance> == 1,
      "tf::nn::fused_batch_norm: scale, offset, mean and variance must be rank 1");
  static_assert(std::same_as<T, value_type_of<Scale>> && std::same_as<T, value_type_of<Offset>> &&
                    std::same_as<T, value_type_of<Mean>> &&
                    std::same_as<T, value_type_of<Variance>>,
                "tf::nn::fused_batch_norm: all operands must have x's dtype");
  ops::FusedBatchNormV3 const op{options.epsilon, options.is_training};
  auto const& in = detail::as_tensor(x);
  if constexpr (R == 4) {
    return detail::execute(op, in, detail::as_tensor(scale), detail::as_tensor(offset),
                           detail::as_tensor(mean), detail::as_tensor(variance));
  } else {
    auto const c = in.dims()[R - 1];
    auto const y = detail::execute(op, reshape(in, std::array<std::int64_t, 4>{-1, 1, 1, c}),
                                   detail::as_tensor(scale), detail::as_tensor(offset),
                                   detail::as_tensor(mean), detail::as_tensor(variance));
    return reshape(y, in.dims());
  }
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
