// The input gradient of batch normalization (TensorFlow op "FusedBatchNormGradV3", its output
// `x_backprop`), channels last: what FusedBatchNormV3's gradient (ops/nn/batch_norm.hpp) runs
// for dx, in three passes over x and dy where the same formula in other ops takes a dozen, or
// two given the channel sums that dscale and doffset are (FusedBatchNormGradGivenSumsV3).
//
// Per channel, with M rows, g = dy, s = scale, eps = epsilon:
//   training:  m, v the batch's mean and biased variance of x, c = x - m, r = 1 / sqrt(v + eps)
//              dx = s * r * (g - mean(g) - c * r^2 * mean(g * c))
//   inference: dx = g * s / sqrt(variance + eps)
// In both modes m and v are the mean and variance inputs. In training mode they must be x's
// batch moments, the values TensorFlow's op reads from its reserve spaces 1 and 2 (here
// FusedBatchNormV3's gradient passes them: ops/nn/batch_norm.hpp), so the op never recomputes
// them; they get no gradient, and the second-order formulas below account for their
// dependence on x.
//
// Its own gradient (second order) for an incoming u = d(loss)/d(dx):
//   d/dg = FusedBatchNormGradV3(u, x, s)            (dx is linear in g)
//   d/ds = sum(u * FusedBatchNormGradV3(g, x, 1))   (dx is linear in s)
//   d/dx = s * r^3 * (c * (3 r^2 C Q - P) / M - (g - mean(g)) * Q / M - (u - mean(u)) * C)
//          with P = sum(u * (g - mean(g))), C = mean(g * c), Q = sum(u * c)   (training; 0 in
//          inference, where dx does not depend on x)
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
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

/// The input gradient of FusedBatchNormV3 (TensorFlow op "FusedBatchNormGradV3", its output
/// `x_backprop`): inputs y_backprop and x [N, H, W, C], scale, mean, variance [C] (in training
/// mode x's batch moments; see the header comment).
struct FusedBatchNormGradV3 {
  static constexpr std::string_view name = "FusedBatchNormGradV3";
  static constexpr std::string_view type_attr = "T";
  static constexpr std::string_view output_arg = "x_backprop";
  float epsilon = 1e-3f;  ///< added to the variance (TensorFlow's attribute, float)
  bool is_training = true;

  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const&, Tensor<T, R> const&,
                                        Tensor<T, 1> const&, Tensor<T, 1> const&,
                                        Tensor<T, 1> const&) const {
    return {{"U", dtype_v<T>},
            {"epsilon", epsilon},
            {"data_format", "NHWC"},
            {"is_training", is_training}};
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(Tensor<T, R> const& dy, Tensor<T, R> const& x, Tensor<T, 1> const& scale,
                      Tensor<T, 1> const& mean, Tensor<T, 1> const& variance) const {
    if (dy.dims() != x.dims()) {
      throw invalid_argument(std::string(name) + ": y_backprop of shape " +
                             Shape(dy.dims()).to_string() + " and x of shape " +
                             Shape(x.dims()).to_string() + " differ");
    }
    // scale fills the check's offset slot too: FusedBatchNormV3's operands but offset.
    detail::nn_impl::check_batch_norm_operands<T, R>(
        name, false, x.dims(), {scale.dims(), scale.dims(), mean.dims(), variance.dims()});
    return {x.dims()};
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, R>& dx, Tensor<T, R> const& dy, Tensor<T, R> const& x,
               Tensor<T, 1> const& scale, Tensor<T, 1> const& mean,
               Tensor<T, 1> const& variance) const {
    std::int64_t const c = x.dims()[R - 1];
    std::int64_t const rows = c == 0 ? 0 : x.num_elements() / c;
    detail::nn_impl::fused_batch_norm_grad(dy.data(), x.data(), rows, c, scale.data(), mean.data(),
                                           variance.data(), static_cast<double>(epsilon),
                                           is_training, detail::tensor_access::mutable_data(dx));
  }

  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& u, Tensor<T, R> const&, Tensor<T, R> const& dy,
                Tensor<T, R> const& x, Tensor<T, 1> const& scale, Tensor<T, 1> const& mean,
                Tensor<T, 1> const& variance) const {
    FusedBatchNormGradV3 const op = *this;
    int const axes[3] = {0, 1, 2};
    return std::tuple{
        [=]() -> Tensor<T, R> { return detail::execute(op, u, x, scale, mean, variance); },
        [=]() -> Tensor<T, R> {
          if (!op.is_training) {
            return zeros_like(x);
          }
          auto const count =
              static_cast<T>(x.num_elements() / std::max<std::int64_t>(x.dims()[R - 1], 1));
          auto const c = x - mean;
          auto const r = T(1) / sqrt(variance + static_cast<T>(op.epsilon));
          auto const g = dy - reduce_mean(dy, axes);
          auto const p = reduce_sum(u * g, axes);
          auto const cg = reduce_mean(dy * c, axes);
          auto const q = reduce_sum(u * c, axes);
          return (scale * r * r * r) * (c * ((T(3) * r * r * cg * q - p) / count) -
                                        g * (q / count) - (u - reduce_mean(u, axes)) * cg);
        },
        [=]() -> Tensor<T, 1> {
          return reduce_sum(u * detail::execute(op, dy, x, ones_like(scale), mean, variance), axes);
        },
        no_gradient, no_gradient};
  }
};

/// FusedBatchNormGradV3's x_backprop in training mode given that op's other two outputs,
/// scale_backprop = sum(dy * xhat) and offset_backprop = sum(dy) by channel: inputs as
/// FusedBatchNormGradV3's (mean and variance x's batch moments), then those two [C]. dx is then
/// one pass over dy and x; FusedBatchNormGradV3 first sums them in a pass of its own.
/// FusedBatchNormV3's gradient computes both sums anyway, for scale and offset, and hands them
/// over (ops/nn/batch_norm.hpp, Note [Batch-norm gradient sums] in MAINTAINERS.md). The two must
/// be those functions of dy and x, as the moments must be x's: they get no gradient, and the
/// gradient for dy, x and scale is FusedBatchNormGradV3's, which accounts for them.
struct FusedBatchNormGradGivenSumsV3 {
  static constexpr std::string_view name = "FusedBatchNormGradV3";
  static constexpr std::string_view type_attr = "T";
  static constexpr std::string_view output_arg = "x_backprop";
  float epsilon = 1e-3f;  ///< added to the variance (TensorFlow's attribute, float)

  /// TensorFlow's op computes scale_backprop and offset_backprop as outputs; none takes them in.
  [[nodiscard]] std::string export_error() const {
    return "FusedBatchNormGradV3 given its scale_backprop and offset_backprop (the x gradient "
           "of a traced batch normalization) has no TensorFlow form";
  }

  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const& dy, Tensor<T, R> const& x,
                                        Tensor<T, 1> const& scale, Tensor<T, 1> const& mean,
                                        Tensor<T, 1> const& variance, Tensor<T, 1> const&,
                                        Tensor<T, 1> const&) const {
    return FusedBatchNormGradV3{epsilon, true}.attributes(dy, x, scale, mean, variance);
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(Tensor<T, R> const& dy, Tensor<T, R> const& x, Tensor<T, 1> const& scale,
                      Tensor<T, 1> const& mean, Tensor<T, 1> const& variance,
                      Tensor<T, 1> const& scale_backprop,
                      Tensor<T, 1> const& offset_backprop) const {
    auto spec = FusedBatchNormGradV3{epsilon, true}.infer(dy, x, scale, mean, variance);
    std::int64_t const c = x.dims()[R - 1];
    for (auto const& [label, given] : {std::pair{"scale_backprop", scale_backprop.dims()[0]},
                                       std::pair{"offset_backprop", offset_backprop.dims()[0]}}) {
      if (given != c) {
        throw invalid_argument(std::string(name) + ": " + label + " has " + std::to_string(given) +
                               " elements but x of shape " + Shape(x.dims()).to_string() + " has " +
                               std::to_string(c) + " channels");
      }
    }
    return spec;
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, R>& dx, Tensor<T, R> const& dy, Tensor<T, R> const& x,
               Tensor<T, 1> const& scale, Tensor<T, 1> const& mean, Tensor<T, 1> const& variance,
               Tensor<T, 1> const& scale_backprop, Tensor<T, 1> const& offset_backprop) const {
    std::int64_t const c = x.dims()[R - 1];
    std::int64_t const rows = c == 0 ? 0 : x.num_elements() / c;
    detail::nn_impl::fused_batch_norm_grad_given_sums(
        dy.data(), x.data(), rows, c, scale.data(), mean.data(), variance.data(),
        scale_backprop.data(), offset_backprop.data(), static_cast<double>(epsilon),
        detail::tensor_access::mutable_data(dx));
  }

  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& u, Tensor<T, R> const& dx, Tensor<T, R> const& dy,
                Tensor<T, R> const& x, Tensor<T, 1> const& scale, Tensor<T, 1> const& mean,
                Tensor<T, 1> const& variance, Tensor<T, 1> const&, Tensor<T, 1> const&) const {
    return std::tuple_cat(
        FusedBatchNormGradV3{epsilon, true}.gradient(u, dx, dy, x, scale, mean, variance),
        std::tuple{no_gradient, no_gradient});
  }
};

}  // namespace ops
TAPEFLOW_END_NAMESPACE
