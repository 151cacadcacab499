// softmax and log_softmax along one axis (TensorFlow: `tf.nn.softmax`, `tf.nn.log_softmax`).
//
// Both subtract the maximum along the axis before exponentiating, so large logits neither
// overflow nor lose precision. TensorFlow's kernels work on the last axis and transpose for
// others; here the axis is an attribute of the op and the kernel walks it with a stride.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {
/// Normalises `axis` (negative counts from the end) for a tensor of rank R, or throws.
template <std::size_t R>
int normalize_axis(std::string_view op, int axis, Shape const& shape) {
  constexpr int rank = static_cast<int>(R);
  if (axis < -rank || axis >= rank) {
    throw invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                           " is out of range for a tensor of shape " + shape.to_string());
  }
  return axis < 0 ? axis + rank : axis;
}

/// Splits dims around `axis` as [outer, n, inner].
template <std::size_t R>
void split_at_axis(std::array<std::int64_t, R> const& dims, int axis, std::int64_t& outer,
                   std::int64_t& n, std::int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) {
    outer *= dims[static_cast<std::size_t>(i)];
  }
  n = dims[static_cast<std::size_t>(axis)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < R; ++i) {
    inner *= dims[i];
  }
}

/// (Log-)softmax of `x` along the middle axis of [outer, n, inner] into `y`. Defined with
/// Eigen in ops/detail/softmax_kernels.hpp (compiled in tapeflow::instantiations under
/// TAPEFLOW_PRECOMPILED).
template <bool Log, class T>
void softmax_kernel(T const* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner);

/// The normalised axis of a softmax-like op for the rule checks shared by both ops.
template <class T, std::size_t R>
void check_softmax_input(std::string_view op, int axis, Tensor<T, R> const& x) {
  static_assert(floating_element<T>,
                "tf::nn::softmax / log_softmax(logits): logits must be float or double");
  static_assert(R >= 1, "tf::nn::softmax / log_softmax(logits): logits must have rank >= 1");
  if (axis < 0 || axis >= static_cast<int>(R)) {
    throw invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                           " is out of range for a tensor of shape " + x.shape().to_string());
  }
}
/// Why a softmax-like op over `axis` of a rank-`rank` input does not export (TensorFlow's op
/// normalises the last axis only), or "" when it does.
inline std::string softmax_export_error(std::string_view op, int axis, std::size_t rank) {
  if (axis + 1 == static_cast<int>(rank)) {
    return {};
  }
  return std::string(op) + " over axis " + std::to_string(axis) + " of a rank-" +
         std::to_string(rank) +
         " tensor: TensorFlow's op has no axis attribute and normalises the last axis only";
}
}  // namespace detail::nn_impl

namespace ops {

/// softmax(x)_i = exp(x_i) / sum_j exp(x_j) along `axis` (TensorFlow op "Softmax").
struct Softmax {
  static constexpr std::string_view name = "Softmax";
  static constexpr std::string_view type_attr = "T";         ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "softmax";  ///< TensorFlow's output argument
  int axis = -1;                                             // normalised (>= 0) by tf::nn::softmax

  /// TensorFlow's Softmax has no axis attribute: it normalises the last axis only.
  template <class T, std::size_t R>
  [[nodiscard]] std::string export_error(Tensor<T, R> const&) const {
    return detail::nn_impl::softmax_export_error(name, axis, R);
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(Tensor<T, R> const& logits) const {
    detail::nn_impl::check_softmax_input(name, axis, logits);
    return {logits.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& y, Tensor<T, R> const& logits) const {
    std::int64_t outer = 0, n = 0, inner = 0;
    detail::nn_impl::split_at_axis(logits.dims(), axis, outer, n, inner);
    detail::nn_impl::softmax_kernel<false>(
        logits.data(), tapeflow::detail::tensor_access::mutable_data(y), outer, n, inner);
  }
  // dx = y * (dy - sum(dy * y, axis))
  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const& y, Tensor<T, R> const&) const {
    return (dy - reduce_sum(dy * y, axis, keepdims)) * y;
  }
};

/// log(softmax(x)) = x - log(sum exp(x)) along `axis` (TensorFlow op "LogSoftmax").
struct LogSoftmax {
  static constexpr std::string_view name = "LogSoftmax";
  static constexpr std::string_view type_attr = "T";            ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "logsoftmax";  ///< TensorFlow's output argument
  int axis = -1;  // normalised (>= 0) by tf::nn::log_softmax

  /// TensorFlow's LogSoftmax has no axis attribute: it normalises the last axis only.
  template <class T, std::size_t R>
  [[nodiscard]] std::string export_error(Tensor<T, R> const&) const {
    return detail::nn_impl::softmax_export_error(name, axis, R);
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(Tensor<T, R> const& logits) const {
    detail::nn_impl::check_softmax_input(name, axis, logits);
    return {logits.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& y, Tensor<T, R> const& logits) const {
    std::int64_t outer = 0, n = 0, inner = 0;
    detail::nn_impl::split_at_axis(logits.dims(), axis, outer, n, inner);
    detail::nn_impl::softmax_kernel<true>(
        logits.data(), tapeflow::detail::tensor_access::mutable_data(y), outer, n, inner);
  }
  // dx = dy - softmax(x) * sum(dy, axis), with softmax(x) = exp(y)
  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const& y, Tensor<T, R> const&) const {
    return dy - exp(y) * reduce_sum(dy, axis, keepdims);
  }
};

}  // namespace ops

namespace nn {

/// Softmax activations along `axis` (TensorFlow: `tf.nn.softmax(logits, axis=-1)`):
/// `exp(logits) / reduce_sum(exp(logits), axis, keepdims)`, computed stably.
///
///     auto p = tf::nn::softmax(tf::constant<float>({{1, 2, 3}}));  // [[0.090 0.245 0.665]]
///
/// `logits` is a float or double tensor of rank >= 1; `axis` may be negative (counted from
/// the end). Throws invalid_argument if `axis` is out of range.
template <tensor_like X>
tensor_type_of<X> softmax(X const& logits, int axis = -1) {
  static_assert(rank_of<X> >= 1, "tf::nn::softmax(logits, axis): logits must have rank >= 1");
  static_assert(floating_element<value_type_of<X>>,
                "tf::nn::softmax(logits, axis): logits must be float or double");
  auto const& x = tapeflow::detail::as_tensor(logits);
  int const a =
      tapeflow::detail::nn_impl::normalize_axis<rank_of<X>>(ops::Softmax::name, axis, x.shape());
  return tapeflow::detail::execute(ops::Softmax{a}, x);
}

/// Log-softmax along `axis` (TensorFlow: `tf.nn.log_softmax(logits, axis=-1)`):
/// `logits - log(reduce_sum(exp(logits), axis, keepdims))`, computed stably (no log(0) for
/// very negative logits).
///
/// `logits` is a float or double tensor of rank >= 1; `axis` may be negative. Throws
/// invalid_argument if `axis` is out of range.
template <tensor_like X>
tensor_type_of<X> log_softmax(X const& logits, int axis = -1) {
  static_assert(rank_of<X> >= 1, "tf::nn::log_softmax(logits, axis): logits must have rank >= 1");
  static_assert(floating_element<value_type_of<X>>,
                "tf::nn::log_softmax(logits, axis): logits must be float or double");
  auto const& x = tapeflow::detail::as_tensor(logits);
  int const a =
      tapeflow::detail::nn_impl::normalize_axis<rank_of<X>>(ops::LogSoftmax::name, axis, x.shape());
  return tapeflow::detail::execute(ops::LogSoftmax{a}, x);
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE

#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/detail/softmax_kernels.hpp>
#endif
