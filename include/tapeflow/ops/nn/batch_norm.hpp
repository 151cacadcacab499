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
// reduce_mean, as Keras 3's `ops.moments` does, and may then hand them to the op in training
// mode as its mean and variance with `batch_moments_given`: the kernel normalizes with them
// instead of computing them again, and the gradient passes them on as TensorFlow's reserve
// spaces. TensorFlow's op ignores those inputs in training mode and computes the same moments,
// so an exported graph means the same; the flag is not one of its attributes. Without the
// flag the gradient computes the moments once, in ops, for both gradient kernels.
//
// Kernel (ops/nn/detail/batch_norm_kernels.hpp): x viewed as [rows, C]; the statistics are
// one read of x (per cached chunk of rows: its mean, then squared deviations; chunks merged in
// double), then one pass y = x * a + b with a = scale / sqrt(var + eps), b = offset - mean * a
// per channel.
//
// Gradient (no gradient for mean and variance, as in TensorFlow), with xhat = (x - m) * r,
// r = 1 / sqrt(v + eps) and (m, v) the batch's moments in training, else the inputs (both
// passed to the gradient ops as their mean and variance):
//   dscale = FusedBatchNormScaleGradV3(dy, x, scale, mean, variance) = sum(dy * xhat)
//   doffset = sum(dy)
//   dx = FusedBatchNormGradGivenSumsV3(dy, x, scale, mean, variance, dscale, doffset) in
//        training, FusedBatchNormGradV3(dy, x, scale, mean, variance) in inference
//        (ops/nn/batch_norm_grad.hpp)
// dx's op needs dscale and doffset's sums, so it takes them (computed once, whichever of the
// three gradients the tape asks for first) rather than summing dy and x again.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/nn/batch_norm_grad.hpp>
#include <tapeflow/ops/nn/detail/batch_norm_kernels_fwd.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// The kernels' bodies; with TAPEFLOW_PRECOMPILED they come compiled from tapeflow::instantiations,
// and programs do not parse <immintrin.h>.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/nn/detail/batch_norm_kernels.hpp>
#endif

TAPEFLOW_BEGIN_NAMESPACE

namespace ops {

/// The scale gradient of FusedBatchNormV3 (TensorFlow op "FusedBatchNormGradV3", its output
/// `scale_backprop`): sum(dy * xhat) over every axis but the last, xhat = (x - m) / sqrt(v + eps)
/// with (m, v) the mean and variance inputs (x's batch moments in training mode). Inputs as
/// FusedBatchNormGradV3's (scale is not read).
///
/// Its gradient, for an incoming u [C]: dscale is sum(dy * xhat), so d/d(dy) = u * xhat, which is
/// FusedBatchNormV3 with scale u and offset 0, and d/dx is the x gradient of sum(dy * u * xhat),
/// which is FusedBatchNormGradV3 with scale u.
struct FusedBatchNormScaleGradV3 {
  static constexpr std::string_view name = "FusedBatchNormGradV3";
  static constexpr std::string_view type_attr = "T";
  static constexpr std::string_view output_arg = "scale_backprop";
  float epsilon = 1e-3f;  ///< added to the variance (TensorFlow's attribute, float)
  bool is_training = true;

  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const& dy, Tensor<T, R> const& x,
                                        Tensor<T, 1> const& scale, Tensor<T, 1> const& mean,
                                        Tensor<T, 1> const& variance) const {
    return FusedBatchNormGradV3{epsilon, is_training}.attributes(dy, x, scale, mean, variance);
  }

  template <class T, std::size_t R>
  OutSpec<T, 1> infer(Tensor<T, R> const& dy, Tensor<T, R> const& x, Tensor<T, 1> const& scale,
                      Tensor<T, 1> const& mean, Tensor<T, 1> const& variance) const {
    (void)FusedBatchNormGradV3{epsilon, is_training}.infer(dy, x, scale, mean, variance);
    return {{x.dims()[R - 1]}};
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, 1>& dscale, Tensor<T, R> const& dy, Tensor<T, R> const& x,
               Tensor<T, 1> const&, Tensor<T, 1> const& mean, Tensor<T, 1> const& variance) const {
    std::int64_t const c = x.dims()[R - 1];
    std::int64_t const rows = c == 0 ? 0 : x.num_elements() / c;
    detail::nn_impl::fused_batch_norm_scale_grad(dy.data(), x.data(), rows, c, mean.data(),
                                                 variance.data(), static_cast<double>(epsilon),
                                                 detail::tensor_access::mutable_data(dscale));
  }

  template <class T, std::size_t R>
  auto gradient(Tensor<T, 1> const& u, Tensor<T, 1> const&, Tensor<T, R> const& dy,
                Tensor<T, R> const& x, Tensor<T, 1> const&, Tensor<T, 1> const& mean,
                Tensor<T, 1> const& variance) const;
};

/// Batch normalization of an NHWC tensor by channel (TensorFlow op "FusedBatchNormV3", its
/// output `y`): inputs x [N, H, W, C], scale, offset, mean, variance [C]; `is_training` uses
/// the batch's statistics instead of mean and variance, unless `batch_moments_given` says that
/// mean and variance are those statistics (see the header comment).
struct FusedBatchNormV3 {
  static constexpr std::string_view name = "FusedBatchNormV3";
  static constexpr std::string_view type_attr = "T";   ///< TensorFlow's dtype attribute (x, y)
  static constexpr std::string_view output_arg = "y";  ///< TensorFlow's first output
  float epsilon = 1e-3f;  ///< added to the variance (TensorFlow's attribute, float)
  bool is_training = true;
  /// Training mode: mean and variance are x's batch moments, already computed by the caller.
  bool batch_moments_given = false;

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
        name, is_training && !batch_moments_given, x.dims(),
        {scale.dims(), offset.dims(), mean.dims(), variance.dims()});
    return {x.dims()};
  }
  /// With the mean and variance known (inference mode, or the batch's moments given), y = x * a
  /// + b by channel, with the coefficients the kernel computes: a traced chain runs it that way,
  /// with the activation after it (Note [Fusion]).
  template <class T>
  [[nodiscard]] detail::trace::GraphNode::FusedAffine fused_affine() const {
    if (is_training && !batch_moments_given) {
      return {};
    }
    return {.coefficients =
                [](void const* const* params, std::int64_t c, double eps, void* a, void* b) {
                  detail::nn_impl::batch_norm_coefficients(
                      c, static_cast<T const*>(params[0]), static_cast<T const*>(params[1]),
                      static_cast<T const*>(params[2]), static_cast<T const*>(params[3]), eps,
                      static_cast<T*>(a), static_cast<T*>(b));
                },
            .attribute = static_cast<double>(epsilon),
            .kernel =
                [](void* y, void const* x, void const* a, void const* b, std::int64_t n) {
                  detail::nn_impl::affine_run(static_cast<T const*>(x), static_cast<T const*>(a),
                                              static_cast<T const*>(b), static_cast<T*>(y), n);
                }};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& y, Tensor<T, R> const& x, Tensor<T, 1> const& scale,
               Tensor<T, 1> const& offset, Tensor<T, 1> const& mean,
               Tensor<T, 1> const& variance) const {
    std::int64_t const c = x.dims()[R - 1];
    std::int64_t const rows = c == 0 ? 0 : x.num_elements() / c;
    detail::nn_impl::fused_batch_norm(x.data(), rows, c, scale.data(), offset.data(), mean.data(),
                                      variance.data(), static_cast<double>(epsilon),
                                      is_training && !batch_moments_given,
                                      detail::tensor_access::mutable_data(y));
  }
  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const& x,
                Tensor<T, 1> const& scale, Tensor<T, 1> const&, Tensor<T, 1> const& mean,
                Tensor<T, 1> const& variance) const {
    FusedBatchNormV3 const op = *this;
    int const axes[3] = {0, 1, 2};
    // The moments both gradient kernels read: the inputs, or the batch's computed once here.
    Tensor<T, 1> m = mean;
    Tensor<T, 1> v = variance;
    if (is_training && !batch_moments_given) {
      m = reduce_mean(x, axes);
      v = reduce_mean(math::squared_difference(x, m), axes);
    }
    // dscale and doffset, each computed at most once: dx's op in training mode reads both.
    struct ChannelGradients {
      std::optional<Tensor<T, 1>> scale, offset;
    };
    auto const channel = std::make_shared<ChannelGradients>();
    auto const scale_gradient = [=]() -> Tensor<T, 1> {
      if (!channel->scale) {
        channel->scale = detail::execute(FusedBatchNormScaleGradV3{op.epsilon, op.is_training}, dy,
                                         x, scale, m, v);
      }
      return *channel->scale;
    };
    auto const offset_gradient = [=]() -> Tensor<T, 1> {
      if (!channel->offset) {
        channel->offset = reduce_sum(dy, axes);
      }
      return *channel->offset;
    };
    return std::tuple{
        [=]() -> Tensor<T, R> {
          if (!op.is_training) {
            return detail::execute(FusedBatchNormGradV3{op.epsilon, false}, dy, x, scale, m, v);
          }
          return detail::execute(FusedBatchNormGradGivenSumsV3{op.epsilon}, dy, x, scale, m, v,
                                 scale_gradient(), offset_gradient());
        },
        scale_gradient, offset_gradient, no_gradient, no_gradient};
  }
};

template <class T, std::size_t R>
auto FusedBatchNormScaleGradV3::gradient(Tensor<T, 1> const& u, Tensor<T, 1> const&,
                                         Tensor<T, R> const& dy, Tensor<T, R> const& x,
                                         Tensor<T, 1> const&, Tensor<T, 1> const& mean,
                                         Tensor<T, 1> const& variance) const {
  float const eps = epsilon;
  bool const training = is_training;
  return std::tuple{
      [=]() -> Tensor<T, R> {
        return detail::execute(FusedBatchNormV3{eps, training, /*batch_moments_given=*/true}, x, u,
                               zeros_like(u), mean, variance);
      },
      [=]() -> Tensor<T, R> {
        return detail::execute(FusedBatchNormGradV3{eps, training}, dy, x, u, mean, variance);
      },
      no_gradient, no_gradient, no_gradient};
}

}  // namespace ops

namespace detail {
/// Runs `op` on x of rank 2 to 4, viewed as [rows, 1, 1, C] below rank 4 (a free reshape).
template <class T, std::size_t R>
Tensor<T, R> batch_norm_any_rank(ops::FusedBatchNormV3 const& op, Tensor<T, R> const& x,
                                 Tensor<T, 1> const& scale, Tensor<T, 1> const& offset,
                                 Tensor<T, 1> const& mean, Tensor<T, 1> const& variance) {
  if constexpr (R == 4) {
    return execute(op, x, scale, offset, mean, variance);
  } else {
    auto const c = x.dims()[R - 1];
    auto const y = execute(op, reshape(x, std::array<std::int64_t, 4>{-1, 1, 1, c}), scale, offset,
                           mean, variance);
    return reshape(y, x.dims());
  }
}
}  // namespace detail

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
  return detail::batch_norm_any_rank(ops::FusedBatchNormV3{options.epsilon, options.is_training},
                                     detail::as_tensor(x), detail::as_tensor(scale),
                                     detail::as_tensor(offset), detail::as_tensor(mean),
                                     detail::as_tensor(variance));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
