// one_hot<U>(indices, depth, on_value, off_value, axis): one-hot encoding (TensorFlow:
// `tf.one_hot`, op "OneHot"). Not differentiable (TensorFlow's gradient is None too).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// out[..., d, ...] = indices[...] == d ? on_value : off_value, with the new axis of size
/// `depth` at `axis` (TensorFlow op "OneHot"). Indices outside [0, depth) give all-off rows.
template <class U>
struct OneHot {
  static constexpr std::string_view name = "OneHot";
  static constexpr std::string_view type_attr = "TI";       ///< TensorFlow's indices dtype
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  std::int64_t depth = 0;
  U on_value{};
  U off_value{};
  int axis = -1;

  /// TensorFlow's attributes: the output dtype and the new axis (TensorFlow's is -1 for the
  /// last one or non-negative, so other negative axes are counted from the front).
  template <class I, std::size_t R>
  [[nodiscard]] OpAttributes attributes(Tensor<I, R> const&) const {
    const int tf_axis = axis >= -1 ? axis : axis + static_cast<int>(R) + 1;
    return {{"T", dtype_v<U>}, {"axis", tf_axis}};
  }
  /// TensorFlow's `depth`, `on_value` and `off_value` inputs, held here as members.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"depth", Tensor<std::int32_t, 0>(static_cast<std::int32_t>(depth))},
            {"on_value", Tensor<U, 0>(on_value)},
            {"off_value", Tensor<U, 0>(off_value)}};
  }

  template <std::size_t R>
  [[nodiscard]] std::size_t resolved_axis() const {
    constexpr int out_rank = static_cast<int>(R) + 1;
    if (axis < -out_rank || axis >= out_rank) {
      throw invalid_argument("OneHot: axis " + std::to_string(axis) + " is out of range [" +
                             std::to_string(-out_rank) + ", " + std::to_string(out_rank) +
                             ") for indices of rank " + std::to_string(R));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + out_rank : axis);
  }

  template <class I, std::size_t R>
  OutSpec<U, R + 1> infer(Tensor<I, R> const& indices) const {
    static_assert(std::same_as<I, std::uint8_t> || std::same_as<I, std::int32_t> ||
                      std::same_as<I, std::int64_t>,
                  "tf::one_hot: indices must be uint8, int32 or int64");
    if (depth < 0) {
      throw invalid_argument("OneHot: depth must be non-negative, got " + std::to_string(depth));
    }
    std::size_t const ax = resolved_axis<R>();
    OutSpec<U, R + 1> spec{};
    for (std::size_t a = 0, j = 0; a < R + 1; ++a) {
      spec.dims[a] = a == ax ? depth : indices.dims()[j++];
    }
    return spec;
  }

  template <class I, std::size_t R>
  void compute(Tensor<U, R + 1>& out, Tensor<I, R> const& indices) const {
    std::size_t const ax = resolved_axis<R>();
    std::int64_t prefix = 1;
    for (std::size_t a = 0; a < ax; ++a) {
      prefix *= indices.dims()[a];
    }
    std::int64_t const suffix = prefix == 0 ? 0 : indices.num_elements() / prefix;
    U* o = detail::tensor_access::mutable_data(out);
    std::fill_n(o, out.num_elements(), off_value);
    I const* idx = indices.data();
    for (std::int64_t p = 0; p < prefix; ++p) {
      for (std::int64_t s = 0; s < suffix; ++s) {
        auto const d = static_cast<std::int64_t>(idx[p * suffix + s]);
        if (d >= 0 && d < depth) {
          o[(p * depth + d) * suffix + s] = on_value;
        }
      }
    }
  }
};

}  // namespace ops

/// One-hot encoding of integer `indices` (uint8, int32 or int64): a new axis of size `depth` at
/// `axis` (default last) holding `on_value` at the index and `off_value` elsewhere (TensorFlow:
/// `tf.one_hot`). Indices outside [0, depth) give rows of `off_value`. The dtype is U, float by
/// default (or deduced from on_value). Not differentiable.
///
///     auto labels = tf::constant<int32_t>({0, 2});
///     tf::one_hot<float>(labels, 3);              // [[1, 0, 0], [0, 0, 1]]
///     tf::one_hot(labels, 3, 5.0, -1.0, 0);       // float64, shape (3, 2)
template <element_type U = float, tensor_like X>
auto one_hot(X const& indices, std::int64_t depth, U on_value = U(1), U off_value = U(0),
             int axis = -1) {
  static_assert(
      rank_of<X> + 1 <= max_rank,
      "tf::one_hot(indices, depth): the result's rank would exceed tapeflow's maximum rank (8)");
  ops::OneHot<U> op;
  op.depth = depth;
  op.on_value = std::move(on_value);
  op.off_value = std::move(off_value);
  op.axis = axis;
  return detail::execute(op, detail::as_tensor(indices));
}

TAPEFLOW_END_NAMESPACE
