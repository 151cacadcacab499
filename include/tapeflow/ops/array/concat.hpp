// concat(values, axis): joins tensors along an existing axis (TensorFlow: `tf.concat`,
// op "ConcatV2"). The gradient gives each input its slice of the output gradient.
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
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Concatenation along `axis` (negative counts from the end) of a list of tensors whose shapes
/// agree on every other axis (TensorFlow op "ConcatV2").
struct ConcatV2 {
  static constexpr std::string_view name = "ConcatV2";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  int axis = 0;

  /// TensorFlow's attributes: the number of tensors and the type of the `axis` input.
  template <class T, std::size_t R>
  [[nodiscard]] OpAttributes attributes(std::vector<Tensor<T, R>> const& values) const {
    return {{"N", static_cast<std::int64_t>(values.size())}, {"Tidx", DType::int32}};
  }
  /// TensorFlow's `axis` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"axis", Tensor<std::int32_t, 0>(axis)}};
  }

  template <std::size_t R>
  [[nodiscard]] std::size_t resolved_axis() const {
    constexpr int rank = static_cast<int>(R);
    if (axis < -rank || axis >= rank) {
      throw invalid_argument("ConcatV2: axis " + std::to_string(axis) +
                             " is out of range for tensors of rank " + std::to_string(R));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(std::vector<Tensor<T, R>> const& values) const {
    static_assert(R >= 1, "tf::concat: cannot concatenate scalars (rank-0 tensors); use tf::stack");
    if (values.empty()) {
      throw invalid_argument("ConcatV2: needs at least one tensor to concatenate");
    }
    std::size_t const ax = resolved_axis<R>();
    OutSpec<T, R> spec{values[0].dims()};
    for (std::size_t i = 1; i < values.size(); ++i) {
      auto const& d = values[i].dims();
      for (std::size_t a = 0; a < R; ++a) {
        if (a != ax && d[a] != spec.dims[a]) {
          throw invalid_argument("ConcatV2: input " + std::to_string(i) + " has shape " +
                                 values[i].shape().to_string() +
                                 ", which does not match input 0's shape " +
                                 values[0].shape().to_string() +
                                 " outside the concatenation axis " + std::to_string(ax));
        }
      }
      spec.dims[ax] += d[ax];
    }
    return spec;
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, std::vector<Tensor<T, R>> const& values) const {
    std::size_t const ax = resolved_axis<R>();
    std::int64_t outer = 1;
    for (std::size_t a = 0; a < ax; ++a) {
      outer *= out.dims()[a];
    }
    std::int64_t const out_row = outer == 0 ? 0 : out.num_elements() / outer;
    if (out_row == 0) {
      return;
    }
    std::vector<std::int64_t> rows(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      rows[i] = values[i].num_elements() / outer;
    }
    T* o = detail::tensor_access::mutable_data(out);
    backend::cpu::parallel_for(outer, std::max<std::int64_t>(1, detail::parallel_grain / out_row),
                               [&](std::int64_t s, std::int64_t e) {
                                 for (std::int64_t r = s; r < e; ++r) {
                                   T* dst = o + r * out_row;
                                   for (std::size_t i = 0; i < values.size(); ++i) {
                                     dst =
                                         std::copy_n(values[i].data() + r * rows[i], rows[i], dst);
                                   }
                                 }
                               });
  }

  template <class T, std::size_t R>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const&,
                std::vector<Tensor<T, R>> const& values) const {
    std::size_t const ax = resolved_axis<R>();
    return [=] {
      std::vector<Tensor<T, R>> grads;
      grads.reserve(values.size());
      Slice<R> slice;
      for (auto const& x : values) {
        slice.size = x.dims();
        grads.push_back(detail::execute(slice, dy));
        slice.begin[ax] += x.dims()[ax];
      }
      return grads;
    };
  }
};

}  // namespace ops

/// Joins tensors along `axis` (negative counts from the end); their shapes must agree on the
/// other axes (TensorFlow: `tf.concat(values, axis)`). Throws invalid_argument for an empty
/// list, a bad axis or mismatched shapes.
///
///     auto a = tf::constant<float>({{1, 2}});
///     auto b = tf::constant<float>({{3, 4}});
///     tf::concat({a, b}, 0);   // [[1, 2], [3, 4]]
///     tf::concat({a, b}, -1);  // [[1, 2, 3, 4]]
template <class T, std::size_t R>
Tensor<T, R> concat(std::vector<Tensor<T, R>> const& values, int axis) {
  static_assert(
      R >= 1,
      "tf::concat(values, axis): cannot concatenate scalars (rank-0 tensors); use tf::stack");
  return detail::execute(ops::ConcatV2{axis}, values);
}
/// The same for a braced list of tensors: `tf::concat({a, b}, 0)`.
template <class T, std::size_t R>
Tensor<T, R> concat(std::initializer_list<Tensor<T, R>> values, int axis) {
  return concat(std::vector<Tensor<T, R>>(values), axis);
}

TAPEFLOW_END_NAMESPACE
