// stack(values, axis) and unstack(x, axis): joins tensors along a new axis and splits a tensor
// along one (TensorFlow: `tf.stack`, op "Pack"; `tf.unstack`). Pack's gradient is the
// unstacked output gradient; unstack is made of Slice and Reshape ops, so both differentiate
// to any order.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// The pieces of `x` along `axis`, each a recorded Slice then Reshape (TensorFlow's "Unpack").
template <class T, std::size_t R>
std::vector<Tensor<T, R - 1>> unstack_tensor(Tensor<T, R> const& x, int axis) {
  static_assert(R >= 1, "tf::unstack: cannot unstack a scalar (rank-0 tensor)");
  constexpr int rank = static_cast<int>(R);
  if (axis < -rank || axis >= rank) {
    throw invalid_argument("Unpack: axis " + std::to_string(axis) +
                           " is out of range for a tensor of rank " + std::to_string(R));
  }
  std::size_t const ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  std::array<std::int64_t, R - 1> piece_dims{};
  for (std::size_t a = 0, j = 0; a < R; ++a) {
    if (a != ax) {
      piece_dims[j++] = x.dims()[a];
    }
  }
  std::int64_t const n = x.dims()[ax];
  std::vector<Tensor<T, R - 1>> pieces;
  pieces.reserve(static_cast<std::size_t>(n));
  ops::Slice<R> slice;
  slice.size = x.dims();
  slice.size[ax] = 1;
  for (std::int64_t i = 0; i < n; ++i) {
    slice.begin[ax] = i;
    pieces.push_back(execute(ops::Reshape<R - 1>{piece_dims}, execute(slice, x)));
  }
  return pieces;
}

}  // namespace detail

namespace ops {

/// Stacks equally shaped tensors along a new axis `axis` of the output, in [-(R+1), R]
/// (TensorFlow op "Pack").
struct Pack {
  static constexpr std::string_view name = "Pack";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  int axis = 0;

  /// TensorFlow's attributes: the number of tensors and the new axis.
  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(std::vector<Tensor<T, R>> const& values) const {
    return {{"N", static_cast<std::int64_t>(values.size())}, {"axis", axis}};
  }

  template <std::size_t R>
  [[nodiscard]] std::size_t resolved_axis() const {
    constexpr int out_rank = static_cast<int>(R) + 1;
    if (axis < -out_rank || axis >= out_rank) {
      throw invalid_argument("Pack: axis " + std::to_string(axis) + " is out of range [" +
                             std::to_string(-out_rank) + ", " + std::to_string(out_rank) +
                             ") for stacking tensors of rank " + std::to_string(R));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + out_rank : axis);
  }

  template <class T, std::size_t R>
  OutSpec<T, R + 1> infer(std::vector<Tensor<T, R>> const& values) const {
    if (values.empty()) {
      throw invalid_argument("Pack: needs at least one tensor to stack");
    }
    std::size_t const ax = resolved_axis<R>();
    for (std::size_t i = 1; i < values.size(); ++i) {
      if (values[i].dims() != values[0].dims()) {
        throw invalid_argument(
            "Pack: input " + std::to_string(i) + " has shape " + values[i].shape().to_string() +
            ", which does not match input 0's shape " + values[0].shape().to_string());
      }
    }
    OutSpec<T, R + 1> spec{};
    for (std::size_t a = 0, j = 0; a < R + 1; ++a) {
      spec.dims[a] = a == ax ? static_cast<std::int64_t>(values.size()) : values[0].dims()[j++];
    }
    return spec;
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, R + 1>& out, std::vector<Tensor<T, R>> const& values) const {
    std::size_t const ax = resolved_axis<R>();
    std::int64_t outer = 1;
    for (std::size_t a = 0; a < ax; ++a) {
      outer *= values[0].dims()[a];
    }
    std::int64_t const inner = outer == 0 ? 0 : values[0].num_elements() / outer;
    if (inner == 0) {
      return;
    }
    auto const n = static_cast<std::int64_t>(values.size());
    T* o = detail::tensor_access::mutable_data(out);
    backend::cpu::parallel_for(outer,
                               std::max<std::int64_t>(1, detail::parallel_grain / (inner * n)),
                               [&](std::int64_t s, std::int64_t e) {
                                 for (std::int64_t r = s; r < e; ++r) {
                                   T* dst = o + r * n * inner;
                                   for (auto const& x : values) {
                                     dst = std::copy_n(x.data() + r * inner, inner, dst);
                                   }
                                 }
                               });
  }

  template <class T, std::size_t R>
  auto gradient(Tensor<T, R + 1> const& dy, Tensor<T, R + 1> const&,
                std::vector<Tensor<T, R>> const&) const {
    int const ax = static_cast<int>(resolved_axis<R>());
    return [=] { return detail::unstack_tensor(dy, ax); };
  }
};

}  // namespace ops

/// Stacks equally shaped tensors along a new axis, giving rank R+1 (TensorFlow: `tf.stack`).
/// `axis` is in [-(R+1), R]. Throws invalid_argument for an empty list, a bad axis or
/// mismatched shapes.
///
///     auto a = tf::constant<float>({1, 2});
///     auto b = tf::constant<float>({3, 4});
///     tf::stack({a, b});     // [[1, 2], [3, 4]]
///     tf::stack({a, b}, 1);  // [[1, 3], [2, 4]]
template <class T, std::size_t R>
Tensor<T, R + 1> stack(std::vector<Tensor<T, R>> const& values, int axis = 0) {
  static_assert(
      R + 1 <= max_rank,
      "tf::stack(values, axis): the result's rank would exceed tapeflow's maximum rank (8)");
  return detail::execute(ops::Pack{axis}, values);
}
/// The same for a braced list of tensors: `tf::stack({a, b})`.
template <class T, std::size_t R>
Tensor<T, R + 1> stack(std::initializer_list<Tensor<T, R>> values, int axis = 0) {
  return stack(std::vector<Tensor<T, R>>(values), axis);
}

/// Splits `x` along `axis` into x.dim(axis) tensors of rank R-1 (TensorFlow: `tf.unstack`).
/// Each piece is a recorded slice, so gradients flow back to `x`.
///
///     auto rows = tf::unstack(tf::constant<float>({{1, 2}, {3, 4}}));  // [1, 2] and [3, 4]
template <tensor_like X>
auto unstack(X const& x, int axis = 0) {
  static_assert(rank_of<X> >= 1, "tf::unstack(x, axis): cannot unstack a scalar (rank-0 tensor)");
  return detail::unstack_tensor(detail::as_tensor(x), axis);
}

TAPEFLOW_END_NAMESPACE
