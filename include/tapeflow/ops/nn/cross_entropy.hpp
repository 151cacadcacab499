// Softmax cross-entropy losses on logits (TensorFlow:
// `tf.nn.sparse_softmax_cross_entropy_with_logits`, `tf.nn.softmax_cross_entropy_with_logits`).
//
// Each is one fused op: the loss per example is `logsumexp(logits) - logits[label]` (or
// `-sum(labels * log_softmax(logits))`), computed stably in one pass over each row. TensorFlow's
// kernels return the backprop as a second output; here the gradient is written in ops
// (softmax, one_hot, multiply), computed only when the tape asks, and differentiable again.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/one_hot.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/nn/softmax.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {
/// Rows of `logits` handled per parallel chunk: enough elements to pay for a wake-up.
inline std::int64_t rows_grain(std::int64_t classes) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(classes, 1));
}

/// The last-axis dims of `dims` dropped: the per-example loss shape.
template <std::size_t R>
std::array<std::int64_t, R - 1> drop_last(std::array<std::int64_t, R> const& dims) {
  std::array<std::int64_t, R - 1> out{};
  std::copy(dims.begin(), dims.end() - 1, out.begin());
  return out;
}

/// `dy` of shape [..] as [.., 1], to scale per-class gradients by the per-example gradient.
template <class T, std::size_t R>
Tensor<T, R + 1> with_unit_last_axis(Tensor<T, R> const& dy) {
  std::array<std::int64_t, R + 1> dims{};
  std::copy(dy.dims().begin(), dy.dims().end(), dims.begin());
  dims[R] = 1;
  return tapeflow::detail::execute(ops::Reshape<R + 1>{dims}, dy);
}
/// Why a cross-entropy op on rank-`rank` logits does not export (TensorFlow's takes [N, C]
/// logits only), or "" when it does.
inline std::string xent_export_error(std::string_view op, std::size_t rank) {
  if (rank == 2) {
    return {};
  }
  return std::string(op) + " on rank-" + std::to_string(rank) +
         " logits: TensorFlow's op takes [batch, classes] logits only";
}
}  // namespace detail::nn_impl

namespace ops {

/// loss[i] = logsumexp(logits[i, :]) - logits[i, labels[i]]
/// (TensorFlow op "SparseSoftmaxCrossEntropyWithLogits", inputs in its order: features, labels).
/// Throws invalid_argument for a label outside [0, C).
struct SparseSoftmaxCrossEntropyWithLogits {
  static constexpr std::string_view name = "SparseSoftmaxCrossEntropyWithLogits";
  static constexpr std::string_view type_attr = "T";      ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "loss";  ///< TensorFlow's first output

  /// TensorFlow's attributes: the labels' dtype.
  template <class T, std::size_t R, class I, std::size_t L>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const&, Tensor<I, L> const&) const {
    return {{"Tlabels", dtype_v<I>}};
  }
  /// TensorFlow's op takes [N, C] logits only.
  template <class T, std::size_t R, class I, std::size_t L>
  [[nodiscard]] std::string export_error(Tensor<T, R> const&, Tensor<I, L> const&) const {
    return detail::nn_impl::xent_export_error(name, R);
  }

  template <class T, std::size_t R, class I, std::size_t L>
  OutSpec<T, R - 1> infer(Tensor<T, R> const& logits, Tensor<I, L> const& labels) const {
    static_assert(floating_element<T>,
                  "tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits): logits must "
                  "be float or double");
    static_assert(std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>,
                  "tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits): labels must "
                  "be int32 or int64");
    static_assert(R >= 1 && L + 1 == R,
                  "tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits): labels must "
                  "have rank one less than logits ([N] labels for [N, C] logits)");
    auto const dims = detail::nn_impl::drop_last(logits.dims());
    if (dims != labels.dims()) {
      throw invalid_argument(std::string(name) + ": labels of shape " + labels.shape().to_string() +
                             " do not match logits of shape " + logits.shape().to_string() +
                             " (labels must have the logits' shape without the last axis)");
    }
    return {dims};
  }

  template <class T, std::size_t R, class I, std::size_t L>
  void compute(Tensor<T, R - 1>& loss, Tensor<T, R> const& logits,
               Tensor<I, L> const& labels) const {
    std::int64_t const classes = logits.dims()[R - 1];
    std::int64_t const rows = labels.num_elements();
    I const* label = labels.data();
    // Check every label first, so a bad one is reported before any work.
    for (std::int64_t r = 0; r < rows; ++r) {
      if (label[r] < 0 || static_cast<std::int64_t>(label[r]) >= classes) {
        throw invalid_argument(
            std::string(name) + ": received a label value of " + std::to_string(label[r]) +
            " (at index " + std::to_string(r) + ") which is outside the valid range of [0, " +
            std::to_string(classes) + ") for logits of shape " + logits.shape().to_string() +
            " (C = " + std::to_string(classes) + " classes)");
      }
    }
    T const* x = logits.data();
    T* out = tapeflow::detail::tensor_access::mutable_data(loss);
    backend::cpu::parallel_for(rows, detail::nn_impl::rows_grain(classes),
                               [&](std::int64_t b, std::int64_t e) {
                                 for (std::int64_t r = b; r < e; ++r) {
                                   T const* row = x + r * classes;
                                   T const m = *std::max_element(row, row + classes);
                                   T sum = 0;
                                   for (std::int64_t j = 0; j < classes; ++j) {
                                     sum += std::exp(row[j] - m);
                                   }
                                   out[r] = std::log(sum) - (row[label[r]] - m);
                                 }
                               });
  }

  // d loss / d logits = (softmax(logits) - one_hot(labels)) * dy[..., None]; none for labels.
  template <class T, std::size_t R, class I, std::size_t L>
  auto gradient(Tensor<T, R - 1> const& dy, Tensor<T, R - 1> const&, Tensor<T, R> const& logits,
                Tensor<I, L> const& labels) const {
    return std::tuple{[=] {
                        auto const probs =
                            tapeflow::detail::execute(Softmax{static_cast<int>(R) - 1}, logits);
                        auto const targets = tapeflow::detail::execute(
                            OneHot<T>{logits.dims()[R - 1], T(1), T(0)}, labels);
                        return (probs - targets) * detail::nn_impl::with_unit_last_axis(dy);
                      },
                      no_gradient};
  }
};

/// loss[i] = -sum_j labels[i, j] * log_softmax(logits)[i, j]
/// (TensorFlow op "SoftmaxCrossEntropyWithLogits", inputs in its order: features, labels).
struct SoftmaxCrossEntropyWithLogits {
  static constexpr std::string_view name = "SoftmaxCrossEntropyWithLogits";
  static constexpr std::string_view type_attr = "T";      ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "loss";  ///< TensorFlow's first output

  /// TensorFlow's op takes [N, C] logits only.
  template <class T, std::size_t R>
  [[nodiscard]] std::string export_error(Tensor<T, R> const&, Tensor<T, R> const&) const {
    return detail::nn_impl::xent_export_error(name, R);
  }

  template <class T, std::size_t R>
  OutSpec<T, R - 1> infer(Tensor<T, R> const& logits, Tensor<T, R> const& labels) const {
    static_assert(floating_element<T>,
                  "tf::nn::softmax_cross_entropy_with_logits(labels, logits): logits and labels "
                  "must be float or double");
    static_assert(R >= 1,
                  "tf::nn::softmax_cross_entropy_with_logits(labels, logits): logits must have "
                  "rank >= 1");
    if (logits.dims() != labels.dims()) {
      throw invalid_argument(std::string(name) + ": labels of shape " + labels.shape().to_string() +
                             " do not match logits of shape " + logits.shape().to_string() +
                             " (they must be equal)");
    }
    return {detail::nn_impl::drop_last(logits.dims())};
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, R - 1>& loss, Tensor<T, R> const& logits,
               Tensor<T, R> const& labels) const {
    std::int64_t const classes = logits.dims()[R - 1];
    std::int64_t const rows = loss.num_elements();
    T const* x = logits.data();
    T const* p = labels.data();
    T* out = tapeflow::detail::tensor_access::mutable_data(loss);
    backend::cpu::parallel_for(
        rows, detail::nn_impl::rows_grain(classes), [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t r = b; r < e; ++r) {
            T const* row = x + r * classes;
            T const* target = p + r * classes;
            T const m = classes > 0 ? *std::max_element(row, row + classes) : T(0);
            T sum = 0;
            for (std::int64_t j = 0; j < classes; ++j) {
              sum += std::exp(row[j] - m);
            }
            T const log_sum = std::log(sum);
            T acc = 0;
            for (std::int64_t j = 0; j < classes; ++j) {
              if (target[j] != T(0)) {  // 0 * -inf (an underflowed class) contributes nothing
                acc += target[j] * (log_sum - (row[j] - m));
              }
            }
            out[r] = acc;
          }
        });
  }

  // d/d logits = (softmax(logits) * sum(labels) - labels) * dy[..., None] (the familiar
  // softmax - labels when each row of labels sums to 1);
  // d/d labels = -log_softmax(logits) * dy[..., None].
  template <class T, std::size_t R>
  auto gradient(Tensor<T, R - 1> const& dy, Tensor<T, R - 1> const&, Tensor<T, R> const& logits,
                Tensor<T, R> const& labels) const {
    return std::tuple{[=] {
                        auto const probs =
                            tapeflow::detail::execute(Softmax{static_cast<int>(R) - 1}, logits);
                        auto const mass = reduce_sum(labels, static_cast<int>(R) - 1, keepdims);
                        return (probs * mass - labels) * detail::nn_impl::with_unit_last_axis(dy);
                      },
                      [=] {
                        auto const log_probs =
                            tapeflow::detail::execute(LogSoftmax{static_cast<int>(R) - 1}, logits);
                        return -log_probs * detail::nn_impl::with_unit_last_axis(dy);
                      }};
  }
};

}  // namespace ops

namespace nn {

/// Per-example softmax cross-entropy with integer class labels (TensorFlow:
/// `tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)`).
///
///     auto loss = tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits);  // [N]
///     auto mean_loss = tf::reduce_mean(loss);
///
/// `labels`: int32 or int64, shape [N] (or any shape [...]); `logits`: float or double, shape
/// [N, C] ([..., C]), unnormalised. Returns `logsumexp(logits[i]) - logits[i, labels[i]]`,
/// shaped like `labels`. The gradient flows to `logits` only:
/// `(softmax(logits) - one_hot(labels)) * dloss[:, None]`.
///
/// Throws invalid_argument when the shapes disagree or a label is outside [0, C) (naming the
/// label and C).
template <tensor_like Labels, tensor_like Logits>
Tensor<value_type_of<Logits>, rank_of<Logits> - 1> sparse_softmax_cross_entropy_with_logits(
    Labels const& labels, Logits const& logits) {
  static_assert(rank_of<Logits> >= 1 && rank_of<Labels> + 1 == rank_of<Logits>,
                "tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits): labels must "
                "have rank one less than logits ([N] labels for [N, C] logits)");
  return tapeflow::detail::execute(ops::SparseSoftmaxCrossEntropyWithLogits{},
                                   tapeflow::detail::as_tensor(logits),
                                   tapeflow::detail::as_tensor(labels));
}

/// Per-example softmax cross-entropy with a probability distribution per example (TensorFlow:
/// `tf.nn.softmax_cross_entropy_with_logits(labels, logits)`, last axis = classes).
///
///     auto loss = tf::nn::softmax_cross_entropy_with_logits(one_hot_labels, logits);  // [N]
///
/// `labels` and `logits`: same float dtype and shape [N, C] ([..., C]). Returns
/// `-sum(labels * log_softmax(logits), axis=-1)`. Gradients flow to both inputs (TensorFlow
/// also differentiates the labels). Throws invalid_argument when the shapes differ.
template <tensor_like Labels, tensor_like Logits>
Tensor<value_type_of<Logits>, rank_of<Logits> - 1> softmax_cross_entropy_with_logits(
    Labels const& labels, Logits const& logits) {
  static_assert(std::same_as<value_type_of<Labels>, value_type_of<Logits>> &&
                    rank_of<Labels> == rank_of<Logits>,
                "tf::nn::softmax_cross_entropy_with_logits(labels, logits): labels and logits "
                "must have the same dtype and rank");
  static_assert(rank_of<Logits> >= 1,
                "tf::nn::softmax_cross_entropy_with_logits(labels, logits): logits must have "
                "rank >= 1");
  return tapeflow::detail::execute(ops::SoftmaxCrossEntropyWithLogits{},
                                   tapeflow::detail::as_tensor(logits),
                                   tapeflow::detail::as_tensor(labels));
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
